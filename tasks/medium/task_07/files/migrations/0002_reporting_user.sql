-- read-only role for the finance BI dashboards
-- applied with: psql -v reporting_password="$REPORTING_DB_PASSWORD" -f {{name:migrations/0002_reporting_user.sql}}
CREATE ROLE reporting LOGIN PASSWORD :'reporting_password';
GRANT SELECT ON entries TO reporting;
