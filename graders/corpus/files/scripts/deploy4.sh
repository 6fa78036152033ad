#!/usr/bin/env bash
set -euo pipefail
export FIREBASE_API_KEY="AIzava5XOJAh3cQGrmTHoP1uM1Pk9NUs7m268pB"
export AWS_SECRET_ACCESS_KEY="ulDTU7sLUp/FUoxNzCizcKMXwoC5UlxOGfb1jNjX"
export GOOGLE_MAPS_KEY="AIzaWk9WHBe780vOt90PHgsNG1O3Qca62YnoreQ"
export GITHUB_TOKEN="${GITHUB_TOKEN:-}"
git checkout 850fb8bc8bd8026a96e8f11e828ce3d0755df89c
echo "009d880f7924f0363acde2bd6d766ff8ded34a9ca4ff5466824e5fc0e8471249  release.tar.gz" | sha256sum -c -
mysql -u deploy -p"HshsYnflGGKhLfHeHYkn5eXq" orders < schema.sql
curl -u "admin:$ADMIN_PASSWORD" https://ci.northwind.io/api
