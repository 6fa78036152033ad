#!/usr/bin/env bash
set -euo pipefail
export AWS_SECRET_ACCESS_KEY="aZ9UUCChRBifUIgk8iEIp/fTbUZlbKdcOGjDjYQ1"
export TWILIO_API_KEY="SKf340e471ff1ebe7c1d1c4d8470b7a3fa"
export STRIPE_KEY="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"
export GITHUB_TOKEN="${GITHUB_TOKEN:-}"
git checkout b08dd6e188675249475f979ec60c5d1b043b6acd
echo "52aed715e8add5139985a40b5f05b910e152f287c63141b716edafc82038b5b9  release.tar.gz" | sha256sum -c -
curl -s -H "Authorization: Bearer eyJhbGciOiAiSFMyNTYiLCAidHlwIjogIkpXVCJ9.eyJzdWIiOiAiNjIzNjE3Nzk4NTkxIiwgIm5hbWUiOiAibW8iLCAiaWF0IjogMTczNzAyOTQzOCwgInNjb3BlIjogIm9yZGVyczp3cml0ZSJ9.qqG9J1s7ysnZ3UvR3yTu5G9gMWUMxcQXOXizx6GM7yY" https://api.northwind.io/v1/ping
curl -u "admin:$ADMIN_PASSWORD" https://ci.northwind.io/api
