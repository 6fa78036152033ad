-- read-only role for the finance BI dashboards
CREATE ROLE reporting LOGIN PASSWORD '{{secret:s4}}';
GRANT SELECT ON entries TO reporting;
