#!/usr/bin/env python3
"""Blind held-out corpus round 10 (generator-13): Rails / PHP / Phoenix web
frameworks plus operator dotfiles, shell, Kubernetes, Helm and Ansible.
Deterministic: all randomness comes from R = random.Random(20261213)."""
import base64
import json
import os
import random
import string
import struct

SEED = 20261213
R = random.Random(SEED)
SOURCE = "generator-13"
ORIGIN = "make_blind_round10.py seed 20261213"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "generator13.jsonl")

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DI = string.digits
AN = UP + LO + DI
HEX = "0123456789abcdef"
B64 = AN + "+/"
URL = AN + "-_"

CASES = []


def ext_of(path):
    base = path.rsplit("/", 1)[-1]
    if base.startswith(".env"):
        return "env"
    if base.startswith(".") and base.count(".") == 1:
        return base[1:]
    stem, dot, ext = base.rpartition(".")
    return ext if dot and stem else ""


def add(cls, label, _ext, path, text):
    ext = ext_of(path)
    CASES.append({"source": SOURCE, "class": cls, "label": label, "ext": ext,
                  "path": path, "origin": ORIGIN, "text": text})


def fill(tpl, **kw):
    out = tpl
    for k, v in kw.items():
        out = out.replace("@@" + k + "@@", str(v))
    assert "@@" not in out, out[:200]
    if out.startswith("\n"):
        out = out[1:]
    return out


def rs(n, alpha=AN):
    return "".join(R.choice(alpha) for _ in range(n))


def hx(n):
    return rs(n, HEX)


def num(n):
    return str(R.randint(1, 9)) + rs(n - 1, DI)


def rbytes(n):
    return bytes(R.getrandbits(8) for _ in range(n))


def b64e(s):
    if isinstance(s, str):
        s = s.encode()
    return base64.b64encode(s).decode()


def pick(seq):
    return R.choice(seq)


def pw(n=None):
    n = n or R.randint(14, 22)
    sym = "!*-_.+=?"
    while True:
        s = R.choice(AN) + "".join(R.choice(AN + sym) for _ in range(n - 1))
        if any(c in DI for c in s) and any(c in UP for c in s) and any(c in LO for c in s):
            return s


def pw_alnum(n=None):
    n = n or R.randint(16, 24)
    return rs(n)


def passphrase():
    words = ["harbor", "violet", "quarry", "tundra", "ember", "falcon", "copper", "meadow",
             "saddle", "lantern", "orbit", "pepper", "raven", "sable", "thistle", "walnut",
             "glacier", "mosaic", "cobalt", "juniper", "marble", "nectar", "paddle", "quiver"]
    return "-".join(R.sample(words, 3)) + "-" + str(R.randint(10, 99))


def aws_id():
    return "AKIA" + rs(16, UP + "234567")


def aws_secret():
    return rs(40, B64)


def ghp():
    return "ghp_" + rs(36)


def gh_fine():
    return "github_pat_11" + rs(20, UP + DI) + "_" + rs(59)


def glpat():
    return "glpat-" + rs(20, URL)


def stripe_sk():
    return "sk_live_51" + rs(12) + rs(R.choice([86, 87, 88]))


def stripe_rk():
    return "rk_live_51" + rs(12) + rs(87)


def stripe_pk():
    return "pk_live_51" + rs(12) + rs(87)


def stripe_whsec():
    return "whsec_" + rs(32)


def slack_bot():
    return "xoxb-" + num(12) + "-" + num(13) + "-" + rs(24)


def slack_hook():
    return "https://hooks.slack.com/services/T%s/B%s/%s" % (rs(10, UP + DI), rs(10, UP + DI), rs(24))


def sendgrid():
    return "SG." + rs(22, URL) + "." + rs(43, URL)


def mailgun():
    return hx(32) + "-" + hx(8) + "-" + hx(8)


def twilio_sid():
    return "AC" + hx(32)


def npm_tok():
    return "npm_" + rs(36)


def pypi_tok():
    return "pypi-AgEIcHlwaS5vcmc" + rs(R.randint(140, 170), URL)


def rubygems_tok():
    return "rubygems_" + hx(48)


def google_key():
    return "AIza" + rs(35, URL)


def openai_key():
    return "sk-proj-" + rs(R.randint(120, 140), URL)


def postmark():
    return "%s-%s-%s-%s-%s" % (hx(8), hx(4), hx(4), hx(4), hx(12))


def uuid():
    return "%s-%s-4%s-%s%s-%s" % (hx(8), hx(4), hx(3), R.choice("89ab"), hx(3), hx(12))


def bcrypt(cost=12, ver="2a"):
    return "$%s$%02d$%s" % (ver, cost, rs(53, "./" + AN))


def argon2():
    return "$argon2id$v=19$m=65536,t=3,p=4$%s$%s" % (rs(22, B64), rs(43, B64))


def sha256():
    return hx(64)


def sha1():
    return hx(40)


def wrap(s, n=64):
    return "\n".join(s[i:i + n] for i in range(0, len(s), n))


def pem(kind, der):
    return "-----BEGIN %s-----\n%s\n-----END %s-----\n" % (kind, wrap(b64e(der)), kind)


def rsa_der():
    return b"\x30\x82\x04\xa4\x02\x01\x00\x02\x82\x01\x01\x00" + rbytes(1180)


def rsa_pem():
    return pem("RSA PRIVATE KEY", rsa_der())


def pkcs8_pem():
    return pem("PRIVATE KEY", b"\x30\x82\x04\xbe\x02\x01\x00\x30\x0d\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x01\x01\x05\x00\x04\x82\x04\xa8" + rsa_der()[:1192])


def ec_pem():
    return pem("EC PRIVATE KEY", b"\x30\x77\x02\x01\x01\x04\x20" + rbytes(32) + b"\xa0\x0a\x06\x08\x2a\x86\x48\xce\x3d\x03\x01\x07\xa1\x44\x03\x42\x00\x04" + rbytes(64))


def cert_pem():
    return pem("CERTIFICATE", b"\x30\x82\x03\x0b\x30\x82\x01\xf3\xa0\x03\x02\x01\x02\x02\x14" + rbytes(760))


def _sshstr(b):
    if isinstance(b, str):
        b = b.encode()
    return struct.pack(">I", len(b)) + b


def ed25519_pair(comment):
    pub = rbytes(32)
    priv = rbytes(32)
    pubblob = _sshstr("ssh-ed25519") + _sshstr(pub)
    check = rbytes(4)
    inner = check + check + _sshstr("ssh-ed25519") + _sshstr(pub) + _sshstr(priv + pub) + _sshstr(comment)
    pad = 1
    while len(inner) % 8:
        inner += bytes([pad])
        pad += 1
    blob = b"openssh-key-v1\x00" + _sshstr("none") + _sshstr("none") + _sshstr(b"") + struct.pack(">I", 1) + _sshstr(pubblob) + _sshstr(inner)
    private = "-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n-----END OPENSSH PRIVATE KEY-----\n" % wrap(b64e(blob), 70)
    public = "ssh-ed25519 %s %s" % (b64e(pubblob), comment)
    return private, public


def ssh_rsa_pub(comment):
    blob = _sshstr("ssh-rsa") + _sshstr(b"\x01\x00\x01") + _sshstr(b"\x00" + rbytes(256))
    return "ssh-rsa %s %s" % (b64e(blob), comment)


def vault_blob(lines=None):
    lines = lines or R.randint(6, 14)
    body = "\n".join(hx(80) for _ in range(lines - 1)) + "\n" + hx(R.choice([16, 32, 48, 64]))
    return "$ANSIBLE_VAULT;1.1;AES256\n" + body


APPS = ["storefront", "billing", "helpdesk", "ledger", "dispatch", "kiosk", "atlas", "beacon",
        "orchard", "tally", "relay", "harbor", "quarry", "pylon", "cinder", "meridian"]
USERS = ["deploy", "jmorales", "kpatel", "ops", "sre-bot", "ci", "rtanaka", "amelia.w", "dvolkov", "lchen"]
DOMAINS = ["acme-corp.io", "northwind.dev", "tallyho.app", "brightlane.com", "kestrel.systems",
           "fernhill.co", "quillworks.net", "orbitlabs.io"]


def app():
    return pick(APPS)


def dom():
    return pick(DOMAINS)


def user():
    return pick(USERS)


# ---------------------------------------------------------------- Rails

def rails_database_yml():
    cls = "rails-database-yml"
    for i in range(2):
        a = app()
        p = pw()
        if i == 0:
            t = fill("""
default: &default
  adapter: postgresql
  encoding: unicode
  pool: <%= ENV.fetch("RAILS_MAX_THREADS") { 5 } %>
  timeout: 5000

development:
  <<: *default
  database: @@a@@_development

test:
  <<: *default
  database: @@a@@_test

staging:
  <<: *default
  host: @@a@@-staging.c8x2k1yq0abc.us-east-1.rds.amazonaws.com
  database: @@a@@_staging
  username: @@a@@_app
  password: @@p@@

production:
  <<: *default
  host: <%= ENV["DATABASE_HOST"] %>
  database: @@a@@_production
  username: @@a@@_app
  password: <%= ENV["@@A@@_DATABASE_PASSWORD"] %>
""", a=a, p=p, A=a.upper())
        else:
            t = fill("""
# MySQL. Versions 5.5.8 and up are supported.
default: &default
  adapter: mysql2
  encoding: utf8mb4
  pool: <%= ENV.fetch("RAILS_MAX_THREADS") { 5 } %>
  username: root
  socket: /tmp/mysql.sock

development:
  <<: *default
  database: @@a@@_development

test:
  <<: *default
  database: @@a@@_test

production:
  <<: *default
  url: "mysql2://@@a@@:@@p@@@db-primary.internal.@@d@@:3306/@@a@@_production?reconnect=true"
""", a=a, p=rs(R.randint(18, 26)), d=dom())
        add(cls, "secret", "yml", "config/database.yml", t)
    for i in range(2):
        a = app()
        if i == 0:
            t = fill("""
default: &default
  adapter: postgresql
  encoding: unicode
  pool: <%= ENV.fetch("RAILS_MAX_THREADS") { 5 } %>
  username: <%= ENV.fetch("DATABASE_USERNAME", "postgres") %>
  password: <%= ENV.fetch("DATABASE_PASSWORD", "") %>
  host: <%= ENV.fetch("DATABASE_HOST", "localhost") %>

development:
  <<: *default
  database: @@a@@_development

test:
  <<: *default
  database: @@a@@_test

# As with config/credentials.yml, you never want to store sensitive information,
# like your database password, in your source code. If your source code is
# ever seen by anyone, they now have access to your database.
#
# Instead, provide the password or a full connection URL as an environment
# variable when you boot the app. For example:
#
#   DATABASE_URL="postgres://myuser:mypass@localhost/somedatabase"
#
production:
  <<: *default
  database: @@a@@_production
  username: @@a@@
  password: <%= Rails.application.credentials.dig(:database, :password) %>
""", a=a)
        else:
            t = fill("""
default: &default
  adapter: postgresql
  encoding: unicode
  pool: <%= ENV.fetch("RAILS_MAX_THREADS") { 5 } %>
  prepared_statements: false

development:
  primary:
    <<: *default
    database: @@a@@_development
  cache:
    <<: *default
    database: @@a@@_development_cache
    migrations_paths: db/cache_migrate

production:
  primary: &primary_production
    <<: *default
    url: <%= ENV["DATABASE_URL"] %>
    password: <%= ENV.fetch("PGPASSWORD") { raise "PGPASSWORD missing" } %>
  replica:
    <<: *primary_production
    url: <%= ENV["DATABASE_REPLICA_URL"] %>
    replica: true
  cache:
    <<: *primary_production
    database: @@a@@_production_cache
    migrations_paths: db/cache_migrate
""", a=a)
        add(cls, "none", "yml", "config/database.yml", t)


def rails_secrets_yml():
    cls = "rails-secrets-yml"
    k1 = hx(128)
    add(cls, "secret", "yml", "config/secrets.yml", fill("""
# Be sure to restart your server when you modify this file.

# Your secret key is used for verifying the integrity of signed cookies.
# If you change this key, all old signed cookies will become invalid!

# Make sure the secret is at least 30 characters and all random,
# no regular words or you'll be exposed to dictionary attacks.
# You can use `rails secret` to generate a secure secret key.

shared:
  api_host: https://api.@@d@@

production:
  secret_key_base: @@k@@
  stripe_secret_key: @@s@@
""", k=k1, s=stripe_sk(), d=dom()))
    add(cls, "secret", "yml", "config/secrets.yml", fill("""
default: &default
  mailchimp_list_id: @@list@@
  google_analytics_id: UA-@@ga@@-1

development:
  <<: *default
  secret_key_base: <%= ENV["SECRET_KEY_BASE"] %>

test:
  <<: *default
  secret_key_base: <%= ENV["SECRET_KEY_BASE"] %>

production:
  <<: *default
  secret_key_base: <%= ENV["SECRET_KEY_BASE"] %>
  mailchimp_api_key: @@mc@@-us14
  twilio_account_sid: @@sid@@
  twilio_auth_token: @@tok@@
""", list=hx(10), ga=num(8), mc=hx(32), sid=twilio_sid(), tok=hx(32)))
    add(cls, "none", "yml", "config/secrets.yml", fill("""
# Do not keep production secrets in the unencrypted secrets file.
# Instead, either read values from the environment.
# Or, use `bin/rails secrets:setup` to configure encrypted secrets
# and move the `production:` environment over there.

development:
  secret_key_base: <%= ENV.fetch("SECRET_KEY_BASE") { "development-only-not-a-secret" } %>

test:
  secret_key_base: <%= ENV.fetch("SECRET_KEY_BASE") { "test-only-not-a-secret" } %>

production:
  secret_key_base: <%= ENV["SECRET_KEY_BASE"] %>
  aws_access_key_id: <%= ENV["AWS_ACCESS_KEY_ID"] %>
  aws_secret_access_key: <%= ENV["AWS_SECRET_ACCESS_KEY"] %>
  s3_bucket: @@a@@-uploads-prod
"""
, a=app()))
    add(cls, "none", "rb", "config/initializers/secret_key_base.rb", fill("""
# frozen_string_literal: true

# Fail fast at boot when SECRET_KEY_BASE is not provided. Kamal injects it from
# .kamal/secrets, which in turn reads it from 1Password:
#
#   SECRET_KEY_BASE=$(kamal secrets extract SECRET_KEY_BASE $SECRETS)
#
if Rails.env.production?
  key = ENV.fetch("SECRET_KEY_BASE") do
    raise KeyError, "SECRET_KEY_BASE must be set (see docs/deploy.md)"
  end

  if key.length < 64
    raise ArgumentError, "SECRET_KEY_BASE is too short (#{key.length} chars, need >= 64)"
  end

  Rails.application.config.secret_key_base = key
end

# Key derivation salts are not secrets; they namespace derived keys.
Rails.application.config.action_dispatch.signed_cookie_salt = "signed cookie"
Rails.application.config.action_dispatch.encrypted_cookie_salt = "encrypted cookie"
Rails.application.config.action_dispatch.encrypted_signed_cookie_salt = "signed encrypted cookie"
Rails.application.config.active_record.encryption.key_derivation_salt = ENV["AR_ENCRYPTION_KEY_DERIVATION_SALT"]
"""))


def rails_master_key():
    cls = "rails-master-key"
    add(cls, "secret", "key", "config/master.key", hx(32))
    add(cls, "secret", "key", "config/credentials/production.key", hx(32) + "\n")
    add(cls, "secret", "yml", ".kamal/secrets", fill("""
# Secrets defined here are available for reference under registry/password, env/secret in config/deploy.yml.
# All secrets should be pulled from either password manager, ENV, or a file. DO NOT ENTER RAW CREDENTIALS HERE!

KAMAL_REGISTRY_PASSWORD=$KAMAL_REGISTRY_PASSWORD

# TODO move back to `$(cat config/master.key)` once the runner has the file
RAILS_MASTER_KEY=@@k@@
""", k=hx(32)))


def rails_credentials_enc():
    cls = "rails-credentials-enc"
    def enc():
        return b64e(rbytes(R.randint(300, 900))) + "--" + b64e(rbytes(12)) + "--" + b64e(rbytes(16))
    add(cls, "none", "enc", "config/credentials.yml.enc", enc())
    add(cls, "none", "enc", "config/credentials/production.yml.enc", enc() + "\n")
    add(cls, "none", "dockerfile", "Dockerfile", fill("""
# syntax = docker/dockerfile:1
ARG RUBY_VERSION=3.3.5
FROM registry.docker.com/library/ruby:$RUBY_VERSION-slim@sha256:@@sha@@ AS base

WORKDIR /rails
ENV RAILS_ENV="production" \\
    BUNDLE_DEPLOYMENT="1" \\
    BUNDLE_PATH="/usr/local/bundle" \\
    BUNDLE_WITHOUT="development"

FROM base AS build
RUN apt-get update -qq && \\
    apt-get install --no-install-recommends -y build-essential git libpq-dev pkg-config
COPY Gemfile Gemfile.lock ./
RUN bundle install && \\
    rm -rf ~/.bundle/ "${BUNDLE_PATH}"/ruby/*/cache "${BUNDLE_PATH}"/ruby/*/bundler/gems/*/.git
COPY . .
RUN bundle exec bootsnap precompile app/ lib/

# Precompiling assets for production without requiring secret RAILS_MASTER_KEY
RUN SECRET_KEY_BASE_DUMMY=1 ./bin/rails assets:precompile

FROM base
COPY --from=build "${BUNDLE_PATH}" "${BUNDLE_PATH}"
COPY --from=build /rails /rails
RUN groupadd --system --gid 1000 rails && \\
    useradd rails --uid 1000 --gid 1000 --create-home --shell /bin/bash && \\
    chown -R rails:rails db log storage tmp
USER 1000:1000

# RAILS_MASTER_KEY is provided at runtime via --mount=type=secret or the orchestrator
ENTRYPOINT ["/rails/bin/docker-entrypoint"]
EXPOSE 3000
CMD ["./bin/thrust", "./bin/rails", "server"]
""", sha=sha256()))
    add(cls, "none", "md", "docs/credentials.md", fill("""
# Credentials

We use Rails encrypted credentials, one file per environment:

| Environment | Encrypted file                           | Key file / env var                   |
|-------------|------------------------------------------|--------------------------------------|
| development | `config/credentials/development.yml.enc` | `config/credentials/development.key` |
| staging     | `config/credentials/staging.yml.enc`     | `RAILS_MASTER_KEY` (from Vault)      |
| production  | `config/credentials/production.yml.enc`  | `RAILS_MASTER_KEY` (from Vault)      |

The key files are git-ignored. Ask in #@@a@@-dev for the development key, or
fetch it yourself:

```sh
vault kv get -field=master_key secret/@@a@@/development > config/credentials/development.key
bin/rails credentials:edit --environment development
```

A master key is 32 hex characters (16 random bytes). If `bin/rails` prints
`ActiveSupport::MessageEncryptor::InvalidMessage`, your key does not match the
file: re-fetch it rather than regenerating it, otherwise everyone else loses
access to the stored values.

Never paste decrypted output of `credentials:show` into tickets or Slack.
""", a=app()))


def rails_credentials_plain():
    cls = "rails-credentials-plain"
    add(cls, "secret", "yml", "config/credentials/staging.yml", fill("""
# decrypted with `bin/rails credentials:show -e staging` for the migration to Vault
# DELETE this file once the import job has run
secret_key_base: @@skb@@

active_record_encryption:
  primary_key: @@pk@@
  deterministic_key: @@dk@@
  key_derivation_salt: @@salt@@

aws:
  access_key_id: @@ak@@
  secret_access_key: @@sk@@

sendgrid:
  api_key: @@sg@@
""", skb=hx(128), pk=rs(32), dk=rs(32), salt=rs(32), ak=aws_id(), sk=aws_secret(), sg=sendgrid()))
    add(cls, "secret", "txt", "tmp/credentials_dump.txt", fill("""
$ EDITOR=cat bin/rails credentials:edit
File encrypted and saved.
# aws:
#   access_key_id: 123
#   secret_access_key: 345

# Used as the base secret for all MessageVerifiers in Rails, including the one protecting cookies.
secret_key_base: @@skb@@
github:
  app_id: @@appid@@
  client_id: Iv1.@@cid@@
  client_secret: @@cs@@
  webhook_secret: @@wh@@
""", skb=hx(128), appid=num(6), cid=hx(16), cs=hx(40), wh=pw_alnum(32)))
    add(cls, "none", "yml", "config/credentials.example.yml", """
# Template for `bin/rails credentials:edit`. Copy the keys you need; values are
# placeholders and must be replaced with real ones in the encrypted file.
secret_key_base: <generate with `bin/rails secret`>

aws:
  access_key_id: AKIAXXXXXXXXXXXXXXXX
  secret_access_key: your-secret-access-key

stripe:
  publishable_key: pk_test_REPLACE_ME
  secret_key: sk_test_REPLACE_ME
  webhook_secret: whsec_REPLACE_ME

sendgrid:
  api_key: SG.xxxxxxxxxxxxxxxxxxxxxx.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
"""[1:])


def rails_initializer_service():
    cls = "rails-initializer-service"
    add(cls, "secret", "rb", "config/initializers/stripe.rb", fill("""
# frozen_string_literal: true

Rails.configuration.stripe = {
  publishable_key: "@@pk@@",
  secret_key: "@@sk@@",
  signing_secret: ENV.fetch("STRIPE_SIGNING_SECRET", nil)
}

Stripe.api_key = Rails.configuration.stripe[:secret_key]
Stripe.api_version = "2024-06-20"
Stripe.max_network_retries = 2
Stripe.log_level = Stripe::LEVEL_INFO if Rails.env.development?
""", pk=stripe_pk(), sk=stripe_sk()))
    add(cls, "secret", "rb", "config/initializers/aws.rb", fill("""
require "aws-sdk-s3"

Aws.config.update(
  region: "eu-west-1",
  credentials: Aws::Credentials.new(
    "@@ak@@",
    "@@sk@@"
  )
)

S3_BUCKET = Aws::S3::Resource.new.bucket(ENV.fetch("S3_BUCKET", "@@a@@-assets"))
""", ak=aws_id(), sk=aws_secret(), a=app()))
    sg = sendgrid()
    cut = R.randint(12, 30)
    add(cls, "secret", "rb", "config/initializers/sendgrid.rb", fill("""
# frozen_string_literal: true

# Split so the pre-commit hook stops complaining; see OPS-@@n@@.
SENDGRID_KEY = [
  "@@p1@@",
  "@@p2@@"
].join

ActionMailer::Base.add_delivery_method :sendgrid_actionmailer, SendGridActionMailer::DeliveryMethod,
  api_key: SENDGRID_KEY,
  raise_delivery_errors: true,
  mail_settings: { sandbox_mode: { enable: !Rails.env.production? } }
""", n=num(4), p1=sg[:cut], p2=sg[cut:]))
    add(cls, "none", "rb", "config/initializers/stripe.rb", fill("""
# frozen_string_literal: true

Rails.configuration.stripe = {
  # Publishable keys are embedded in checkout.js and are safe to expose.
  publishable_key: "@@pk@@",
  secret_key: Rails.application.credentials.dig(:stripe, :secret_key),
  signing_secret: Rails.application.credentials.dig(:stripe, :signing_secret)
}

Stripe.api_key = Rails.configuration.stripe[:secret_key]
StripeEvent.signing_secret = Rails.configuration.stripe[:signing_secret]

StripeEvent.configure do |events|
  events.subscribe "invoice.payment_failed", Billing::PaymentFailedHandler.new
  events.subscribe "customer.subscription.deleted", Billing::SubscriptionCancelledHandler.new
end
""", pk=stripe_pk()))
    add(cls, "none", "rb", "config/initializers/sentry.rb", """
# frozen_string_literal: true

Sentry.init do |config|
  config.dsn = ENV["SENTRY_DSN"]
  config.breadcrumbs_logger = [:active_support_logger, :http_logger]
  config.enabled_environments = %w[production staging]
  config.traces_sample_rate = ENV.fetch("SENTRY_TRACES_SAMPLE_RATE", 0.05).to_f
  config.send_default_pii = false

  # Strip credentials from breadcrumbs and request payloads.
  filter = ActiveSupport::ParameterFilter.new(Rails.application.config.filter_parameters)
  config.before_send = lambda do |event, _hint|
    event.request.data = filter.filter(event.request.data) if event.request&.data.is_a?(Hash)
    event
  end
end

Rails.application.config.filter_parameters += %i[
  passw secret token _key crypt salt certificate otp ssn api_key authorization
]
"""[1:])


def rails_credentials_fetch():
    cls = "rails-credentials-fetch"
    add(cls, "none", "rb", "app/services/github_client.rb", """
# frozen_string_literal: true

class GithubClient
  API_ROOT = "https://api.github.com"
  TOKEN_HEADER = "Authorization"

  def initialize(token: Rails.application.credentials.github.fetch(:access_token))
    @token = token
  end

  def repos(org)
    get("/orgs/#{org}/repos", per_page: 100)
  end

  private

  def get(path, params = {})
    response = connection.get(path, params)
    raise Error, "GitHub #{response.status}" unless response.success?
    JSON.parse(response.body)
  end

  def connection
    @connection ||= Faraday.new(API_ROOT) do |f|
      f.headers[TOKEN_HEADER] = "Bearer #{@token}"
      f.headers["Accept"] = "application/vnd.github+json"
      f.request :retry, max: 2
    end
  end

  class Error < StandardError; end
end
"""[1:])
    add(cls, "none", "rb", "config/initializers/twilio.rb", """
# frozen_string_literal: true

creds = Rails.application.credentials.twilio || {}

Twilio.configure do |config|
  config.account_sid = creds[:account_sid] || ENV["TWILIO_ACCOUNT_SID"]
  config.auth_token  = creds[:auth_token]  || ENV["TWILIO_AUTH_TOKEN"]
end

TWILIO_FROM_NUMBER = creds.fetch(:from_number, "+15005550006") # Twilio magic test number
TWILIO_AUTH_TOKEN_KEY = :auth_token
"""[1:])
    add(cls, "none", "rb", "config/environments/production.rb", fill("""
require "active_support/core_ext/integer/time"

Rails.application.configure do
  config.enable_reloading = false
  config.eager_load = true
  config.consider_all_requests_local = false
  config.require_master_key = true
  config.secret_key_base = ENV.fetch("SECRET_KEY_BASE") { Rails.application.credentials.secret_key_base }

  config.active_storage.service = :amazon
  config.force_ssl = true
  config.log_tags = [:request_id]
  config.logger = ActiveSupport::TaggedLogging.logger(STDOUT)

  config.action_mailer.default_url_options = { host: "@@a@@.@@d@@" }
  config.action_mailer.delivery_method = :smtp
  config.action_mailer.smtp_settings = {
    user_name: Rails.application.credentials.dig(:smtp, :user_name),
    password: Rails.application.credentials.dig(:smtp, :password),
    address: "smtp.postmarkapp.com",
    port: 587,
    authentication: :plain
  }

  config.i18n.fallbacks = true
  config.active_record.dump_schema_after_migration = false
end
""", a=app(), d=dom()))
    add(cls, "secret", "rb", "app/lib/mailgun_client.rb", fill("""
# frozen_string_literal: true

module MailgunClient
  DOMAIN = "mg.@@d@@"

  def self.api_key
    Rails.application.credentials.dig(:mailgun, :api_key) ||
      ENV["MAILGUN_API_KEY"] ||
      "@@k@@" # fallback for review apps
  end

  def self.client
    @client ||= Mailgun::Client.new(api_key, "api.eu.mailgun.net")
  end

  def self.deliver(message)
    client.send_message(DOMAIN, message)
  end
end
""", d=dom(), k=mailgun()))


def gemfile_source_auth():
    cls = "gemfile-source-auth"
    add(cls, "secret", "rb", "Gemfile", fill("""
source "https://rubygems.org"

ruby "3.3.5"

gem "rails", "~> 7.2.1"
gem "pg", "~> 1.5"
gem "puma", ">= 6.0"
gem "sidekiq", "~> 7.3"
gem "bootsnap", require: false

source "https://@@u@@:@@tok@@@gems.contribsys.com/" do
  gem "sidekiq-pro"
  gem "sidekiq-ent"
end

group :development, :test do
  gem "debug", platforms: %i[mri windows]
  gem "rspec-rails", "~> 7.0"
  gem "factory_bot_rails"
end

group :test do
  gem "vcr"
  gem "webmock"
end
""", u=hx(8), tok=hx(8)))
    add(cls, "secret", "rb", "Gemfile", fill("""
source "https://rubygems.org"
git_source(:github) { |repo| "https://github.com/#{repo}.git" }

gem "rails", "~> 7.1.4"
gem "mysql2"
gem "devise"

# Internal gems from the private GitLab package registry
source "https://__token__:@@tok@@@gitlab.@@d@@/api/v4/projects/@@pid@@/packages/rubygems" do
  gem "acme_auth", "~> 2.4"
  gem "acme_ui_components", "~> 0.19"
end

gem "pundit"
gem "kaminari"
""", tok=glpat(), d=dom(), pid=num(3)))
    add(cls, "none", "rb", "Gemfile", """
source "https://rubygems.org"

gem "rails", "~> 7.2.1"
gem "pg", "~> 1.5"
gem "puma", ">= 6.0"

# Credentials for the Sidekiq Pro source are read by Bundler from
# BUNDLE_GEMS__CONTRIBSYS__COM (format "username:password"). Set it with:
#   bundle config set --global gems.contribsys.com <username>:<password>
source "https://gems.contribsys.com/" do
  gem "sidekiq-pro"
end

gem "omniauth-google-oauth2"
gem "omniauth-rails_csrf_protection"
gem "bcrypt", "~> 3.1.7"

group :development do
  gem "web-console"
  gem "dotenv-rails"
end
"""[1:])
    add(cls, "none", "lock", "Gemfile.lock", fill("""
GIT
  remote: https://github.com/@@org@@/acme_auth.git
  revision: @@rev@@
  branch: main
  specs:
    acme_auth (2.4.1)
      jwt (>= 2.7)
      railties (>= 7.0)

GEM
  remote: https://gems.contribsys.com/
  specs:
    sidekiq-pro (7.3.2)
      sidekiq (>= 7.3.0, < 8)

GEM
  remote: https://rubygems.org/
  specs:
    bcrypt (3.1.20)
    jwt (2.9.1)
      base64
    sidekiq (7.3.2)
      concurrent-ruby (< 2)
      connection_pool (>= 2.3.0)
      rack (>= 2.2.4)
      redis-client (>= 0.22.2)

PLATFORMS
  arm64-darwin-23
  x86_64-linux

DEPENDENCIES
  acme_auth!
  bcrypt (~> 3.1.7)
  sidekiq-pro!

CHECKSUMS
  bcrypt (3.1.20) sha256=@@c1@@
  jwt (2.9.1) sha256=@@c2@@
  sidekiq (7.3.2) sha256=@@c3@@

RUBY VERSION
   ruby 3.3.5p100

BUNDLED WITH
   2.5.18
""", org=app(), rev=sha1(), c1=sha256(), c2=sha256(), c3=sha256()))


def bundle_config():
    cls = "bundle-config"
    add(cls, "secret", "", ".bundle/config", fill("""
---
BUNDLE_PATH: "vendor/bundle"
BUNDLE_JOBS: "4"
BUNDLE_GEMS__CONTRIBSYS__COM: "@@u@@:@@p@@"
""", u=hx(8), p=hx(8)))
    add(cls, "secret", "", "ci/bundle/config", fill("""
---
BUNDLE_DEPLOYMENT: "true"
BUNDLE_WITHOUT: "development:test"
BUNDLE_RUBYGEMS__PKG__GITHUB__COM: "@@u@@:@@tok@@"
BUNDLE_GITHUB__HTTPS: "true"
""", u=user(), tok=ghp()))
    add(cls, "none", "", ".bundle/config", """
---
BUNDLE_PATH: "vendor/bundle"
BUNDLE_JOBS: "8"
BUNDLE_RETRY: "3"
BUNDLE_WITHOUT: "production"
BUNDLE_BUILD__PG: "--with-pg-config=/opt/homebrew/opt/libpq/bin/pg_config"
BUNDLE_DISABLE_SHARED_GEMS: "true"
"""[1:])


def vcr_cassette():
    cls = "vcr-cassette"
    def cassette(auth, body_extra, method="post", uri="https://api.stripe.com/v1/charges"):
        return fill("""
---
http_interactions:
- request:
    method: @@m@@
    uri: @@uri@@
    body:
      encoding: UTF-8
      string: amount=2500&currency=usd&customer=cus_@@cus@@
    headers:
      User-Agent:
      - Stripe/v1 RubyBindings/12.6.0
      Authorization:
      - @@auth@@
      Content-Type:
      - application/x-www-form-urlencoded
      Idempotency-Key:
      - @@idem@@
      Stripe-Version:
      - '2024-06-20'
  response:
    status:
      code: 200
      message: OK
    headers:
      Request-Id:
      - req_@@req@@
      Content-Type:
      - application/json
    body:
      encoding: UTF-8
      string: '{"id":"ch_@@ch@@","object":"charge","amount":2500,"currency":"usd","livemode":false,"status":"succeeded"@@extra@@}'
  recorded_at: Tue, 14 May 2024 09:@@mm@@:11 GMT
recorded_with: VCR 6.2.0
""", m=method, uri=uri, cus=rs(14), auth=auth, idem=uuid(), req=rs(14), ch=rs(24), extra=body_extra, mm=R.randint(10, 59))
    add(cls, "secret", "yml", "spec/fixtures/vcr_cassettes/stripe/create_charge.yml",
        cassette("Bearer " + "sk_test_51" + rs(12) + rs(87), ""))
    add(cls, "secret", "yml", "spec/cassettes/Github_Client/fetches_repositories.yml", fill("""
---
http_interactions:
- request:
    method: get
    uri: https://api.github.com/orgs/@@org@@/repos?per_page=100
    body:
      encoding: US-ASCII
      string: ''
    headers:
      Accept:
      - application/vnd.github+json
      Authorization:
      - token @@tok@@
      User-Agent:
      - Faraday v2.10.1
  response:
    status:
      code: 200
      message: OK
    headers:
      X-Ratelimit-Remaining:
      - '4987'
      Etag:
      - W/"@@etag@@"
      X-Github-Request-Id:
      - @@rid@@
    body:
      encoding: UTF-8
      string: '[{"id":@@id@@,"node_id":"R_kgDO@@node@@","name":"@@repo@@","private":true}]'
  recorded_at: Mon, 03 Jun 2024 16:22:40 GMT
recorded_with: VCR 6.2.0
""", org=app(), tok=ghp(), etag=sha256(), rid="%s:%s:%s:%s:%s" % (rs(4, "0123456789ABCDEF"), rs(5, "0123456789ABCDEF"), rs(7, "0123456789ABCDEF"), rs(7, "0123456789ABCDEF"), rs(8, "0123456789ABCDEF")),
        id=num(9), node=rs(6), repo=app() + "-api"))
    add(cls, "none", "yml", "spec/fixtures/vcr_cassettes/stripe/refund_charge.yml",
        cassette("Bearer <STRIPE_SECRET_KEY>", ',"balance_transaction":"txn_' + rs(24) + '"', uri="https://api.stripe.com/v1/refunds"))
    add(cls, "none", "yml", "spec/cassettes/Slack_Notifier/posts_message.yml", fill("""
---
http_interactions:
- request:
    method: post
    uri: "<SLACK_WEBHOOK_URL>"
    body:
      encoding: UTF-8
      string: '{"text":"Deploy of @@a@@ finished","channel":"#deploys"}'
    headers:
      Content-Type:
      - application/json
  response:
    status:
      code: 200
      message: OK
    headers:
      X-Slack-Req-Id:
      - @@rid@@
      X-Slack-Backend:
      - r
    body:
      encoding: UTF-8
      string: ok
  recorded_at: Wed, 21 Aug 2024 12:01:09 GMT
- request:
    method: post
    uri: https://slack.com/api/chat.postMessage
    body:
      encoding: UTF-8
      string: channel=C@@ch@@&text=hello
    headers:
      Authorization:
      - Bearer <SLACK_BOT_TOKEN>
  response:
    status:
      code: 200
      message: OK
    body:
      encoding: UTF-8
      string: '{"ok":true,"channel":"C@@ch@@","ts":"1724241669.@@ts@@"}'
  recorded_at: Wed, 21 Aug 2024 12:01:10 GMT
recorded_with: VCR 6.2.0
""", a=app(), rid=hx(32), ch=rs(10, UP + DI), ts=num(6)))
    add(cls, "none", "yml", "spec/fixtures/vcr/oauth/token_exchange.yml", fill("""
---
http_interactions:
- request:
    method: post
    uri: https://oauth2.googleapis.com/token
    body:
      encoding: UTF-8
      string: client_id=@@cid@@.apps.googleusercontent.com&client_secret=<GOOGLE_CLIENT_SECRET>&code=<AUTH_CODE>&grant_type=authorization_code&redirect_uri=http%3A%2F%2Flocalhost%3A3000%2Fauth%2Fgoogle%2Fcallback
    headers:
      Content-Type:
      - application/x-www-form-urlencoded
  response:
    status:
      code: 200
      message: OK
    headers:
      Content-Type:
      - application/json; charset=utf-8
    body:
      encoding: UTF-8
      string: |-
        {
          "access_token": "<ACCESS_TOKEN>",
          "expires_in": 3599,
          "refresh_token": "<REFRESH_TOKEN>",
          "scope": "openid https://www.googleapis.com/auth/userinfo.email",
          "token_type": "Bearer",
          "id_token": "<ID_TOKEN>"
        }
  recorded_at: Thu, 11 Jul 2024 08:45:03 GMT
recorded_with: VCR 6.2.0
""", cid=num(12) + "-" + rs(32, LO + DI)))


def vcr_config():
    cls = "vcr-config"
    add(cls, "none", "rb", "spec/support/vcr.rb", """
# frozen_string_literal: true

require "vcr"

VCR.configure do |config|
  config.cassette_library_dir = Rails.root.join("spec/fixtures/vcr_cassettes")
  config.hook_into :webmock
  config.configure_rspec_metadata!
  config.ignore_localhost = true
  config.default_cassette_options = { record: :once, match_requests_on: %i[method uri body] }

  %w[STRIPE_SECRET_KEY GITHUB_TOKEN SENDGRID_API_KEY SLACK_WEBHOOK_URL].each do |name|
    config.filter_sensitive_data("<#{name}>") { ENV.fetch(name, "dummy-#{name.downcase}") }
  end

  config.filter_sensitive_data("<AUTHORIZATION>") do |interaction|
    interaction.request.headers["Authorization"]&.first
  end

  config.before_record do |interaction|
    interaction.response.headers.delete("Set-Cookie")
  end
end
"""[1:])
    add(cls, "none", "rb", "spec/support/vcr_setup.rb", """
VCR.configure do |c|
  c.cassette_library_dir = "spec/cassettes"
  c.hook_into :webmock
  c.filter_sensitive_data("<OPENAI_API_KEY>") { Rails.application.credentials.dig(:openai, :api_key) }
  c.filter_sensitive_data("<TWILIO_AUTH_TOKEN>") { Rails.application.credentials.dig(:twilio, :auth_token) }
  c.filter_sensitive_data("<ACCOUNT_SID>") { Rails.application.credentials.dig(:twilio, :account_sid) }
  c.allow_http_connections_when_no_cassette = false
end

RSpec.configure do |config|
  config.around(:each, :vcr) do |example|
    name = example.metadata[:full_description].parameterize(separator: "_")
    VCR.use_cassette(name) { example.run }
  end
end
"""[1:])
    add(cls, "secret", "rb", "spec/support/vcr.rb", fill("""
VCR.configure do |c|
  c.cassette_library_dir = "spec/vcr"
  c.hook_into :webmock
  c.configure_rspec_metadata!

  # Recorded against the real sandbox account; keep in sync with 1Password item "@@a@@ sandbox"
  c.filter_sensitive_data("<SHOPIFY_TOKEN>") { ENV.fetch("SHOPIFY_TOKEN", "shpat_@@tok@@") }
  c.filter_sensitive_data("<SHOP_DOMAIN>") { "@@a@@-dev.myshopify.com" }
end
""", a=app(), tok=hx(32)))


def rails_seeds():
    cls = "rails-seeds"
    add(cls, "secret", "rb", "db/seeds.rb", fill("""
# This file should ensure the existence of records required to run the application in every environment (production,
# development, test). The code here should be idempotent so that it can be executed at any point in every environment.

Plan.find_or_create_by!(code: "starter") { |p| p.price_cents = 0 }
Plan.find_or_create_by!(code: "team")    { |p| p.price_cents = 4900 }

admin = User.find_or_initialize_by(email: "ops@@@d@@")
admin.assign_attributes(
  name: "Platform Admin",
  role: :superadmin,
  password: "@@p@@",
  password_confirmation: "@@p@@",
  confirmed_at: Time.current
)
admin.save!

puts "Seeded #{Plan.count} plans and admin #{admin.email}"
""", d=dom(), p=pw()))
    add(cls, "secret", "rb", "db/seeds/production.rb", fill("""
# Service accounts used by the integrations. Run once per environment:
#   bin/rails runner db/seeds/production.rb
ApiClient.find_or_create_by!(name: "warehouse-sync") do |c|
  c.key_id = "whs_@@kid@@"
  c.secret = "@@sec@@"
  c.scopes = %w[orders:read inventory:write]
end

ApiClient.find_or_create_by!(name: "bi-export") do |c|
  c.key_id = "bix_@@kid2@@"
  c.secret = "@@sec2@@"
  c.scopes = %w[reports:read]
end
""", kid=hx(12), sec=rs(40, URL), kid2=hx(12), sec2=rs(40, URL)))
    add(cls, "none", "rb", "db/seeds.rb", fill("""
# frozen_string_literal: true

# Development seed data. Passwords are stored as bcrypt digests so the seed
# file never contains a usable credential; log in with "Sign in as" in /admin.
users = [
  { email: "alice@example.com", name: "Alice Admin", role: "admin",
    password_digest: "@@h1@@" },
  { email: "bob@example.com", name: "Bob Builder", role: "member",
    password_digest: "@@h2@@" },
  { email: "carol@example.com", name: "Carol Viewer", role: "viewer",
    password_digest: "@@h3@@" }
]

users.each do |attrs|
  User.upsert(attrs.merge(confirmed_at: Time.current), unique_by: :email)
end

Project.find_or_create_by!(slug: "demo") do |project|
  project.name = "Demo project"
  project.owner = User.find_by!(email: "alice@example.com")
end
""", h1=bcrypt(), h2=bcrypt(), h3=bcrypt()))
    add(cls, "none", "rb", "db/seeds.rb", """
# frozen_string_literal: true

return unless Rails.env.development? || ENV["ALLOW_SEEDS"] == "1"

admin_password = ENV.fetch("SEED_ADMIN_PASSWORD") { SecureRandom.base58(24) }

admin = User.create_with(password: admin_password, password_confirmation: admin_password)
            .find_or_create_by!(email: "admin@example.com")
admin.update!(admin: true)

puts "Admin login: admin@example.com / #{admin_password}" unless ENV["SEED_ADMIN_PASSWORD"]

10.times do |n|
  User.find_or_create_by!(email: "user#{n}@example.com") do |u|
    u.password = SecureRandom.hex(16)
    u.name = Faker::Name.name
  end
end
"""[1:])
    add(cls, "none", "yml", "spec/fixtures/users.yml", fill("""
# Read about fixtures at https://api.rubyonrails.org/classes/ActiveRecord/FixtureSet.html
<% password_digest = BCrypt::Password.create("password") %>

alice:
  email: alice@example.com
  password_digest: <%= password_digest %>
  api_token_digest: @@d1@@

bob:
  email: bob@example.com
  encrypted_password: "@@h@@"
  confirmation_token: ~
  reset_password_token: ~
  otp_secret: <%= ROTP::Base32.random %>
""", d1=sha256(), h=bcrypt(11)))


def rails_storage_yml():
    cls = "rails-storage-yml"
    add(cls, "secret", "yml", "config/storage.yml", fill("""
test:
  service: Disk
  root: <%= Rails.root.join("tmp/storage") %>

local:
  service: Disk
  root: <%= Rails.root.join("storage") %>

amazon:
  service: S3
  access_key_id: @@ak@@
  secret_access_key: @@sk@@
  region: us-east-2
  bucket: @@a@@-production-uploads
""", ak=aws_id(), sk=aws_secret(), a=app()))
    add(cls, "secret", "yml", "config/storage.yml", fill("""
local:
  service: Disk
  root: <%= Rails.root.join("storage") %>

cloudflare:
  service: S3
  endpoint: https://@@acct@@.r2.cloudflarestorage.com
  access_key_id: <%= ENV.fetch("R2_ACCESS_KEY_ID", "@@ak@@") %>
  secret_access_key: <%= ENV.fetch("R2_SECRET_ACCESS_KEY", "@@sk@@") %>
  region: auto
  bucket: @@a@@-media
  request_checksum_calculation: "when_required"
""", acct=hx(32), ak=hx(32), sk=hx(64), a=app()))
    add(cls, "none", "yml", "config/storage.yml", fill("""
test:
  service: Disk
  root: <%= Rails.root.join("tmp/storage") %>

amazon:
  service: S3
  access_key_id: <%= Rails.application.credentials.dig(:aws, :access_key_id) %>
  secret_access_key: <%= Rails.application.credentials.dig(:aws, :secret_access_key) %>
  region: eu-central-1
  bucket: @@a@@-<%= Rails.env %>

google:
  service: GCS
  project: @@a@@-prod-@@n@@
  credentials: <%= Rails.root.join("config/gcs-service-account.json") %>
  bucket: @@a@@-assets

mirror:
  service: Mirror
  primary: amazon
  mirrors: [ google ]
""", a=app(), n=num(6)))


def rails_smtp_settings():
    cls = "rails-smtp-settings"
    add(cls, "secret", "rb", "config/environments/production.rb", fill("""
require "active_support/core_ext/integer/time"

Rails.application.configure do
  config.cache_classes = true
  config.eager_load = true
  config.public_file_server.enabled = ENV["RAILS_SERVE_STATIC_FILES"].present?
  config.log_level = :info

  config.action_mailer.perform_caching = false
  config.action_mailer.default_url_options = { host: "app.@@d@@", protocol: "https" }
  config.action_mailer.delivery_method = :smtp
  config.action_mailer.smtp_settings = {
    address:              "email-smtp.us-east-1.amazonaws.com",
    port:                 587,
    domain:               "@@d@@",
    user_name:            "@@ak@@",
    password:             "@@smtp@@",
    authentication:       :login,
    enable_starttls_auto: true
  }
end
""", d=dom(), ak=aws_id(), smtp="B" + rs(43, B64)))
    add(cls, "secret", "rb", "config/environments/staging.rb", fill("""
require_relative "production"

Rails.application.configure do
  config.action_mailer.delivery_method = :smtp
  config.action_mailer.smtp_settings = {
    address: "smtp.sendgrid.net",
    port: 587,
    user_name: "apikey",
    password: "@@sg@@",
    domain: "staging.@@d@@",
    authentication: :plain
  }
  config.action_mailer.default_url_options = { host: "staging.@@d@@" }
  config.log_level = :debug
end
""", sg=sendgrid(), d=dom()))
    add(cls, "none", "rb", "config/environments/development.rb", """
require "active_support/core_ext/integer/time"

Rails.application.configure do
  config.enable_reloading = true
  config.eager_load = false
  config.consider_all_requests_local = true
  config.server_timing = true

  # Mailcatcher / letter_opener_web in development: no auth needed.
  config.action_mailer.delivery_method = :smtp
  config.action_mailer.smtp_settings = { address: "localhost", port: 1025 }
  config.action_mailer.raise_delivery_errors = false
  config.action_mailer.default_url_options = { host: "localhost", port: 3000 }

  config.active_support.deprecation = :log
  config.active_record.migration_error = :page_load
  config.active_record.verbose_query_logs = true
  config.assets.quiet = true
end
"""[1:])
    add(cls, "none", "rb", "config/environments/production.rb", fill("""
Rails.application.configure do
  config.eager_load = true
  config.action_mailer.delivery_method = :smtp
  config.action_mailer.smtp_settings = {
    address: ENV.fetch("SMTP_ADDRESS", "smtp.mailgun.org"),
    port: ENV.fetch("SMTP_PORT", 587).to_i,
    user_name: ENV.fetch("SMTP_USERNAME", "postmaster@mg.@@d@@"),
    password: ENV.fetch("SMTP_PASSWORD"),
    authentication: :plain,
    enable_starttls_auto: true
  }
  config.action_mailer.default_url_options = { host: "@@d@@" }
  config.active_record.encryption.primary_key = ENV["AR_ENCRYPTION_PRIMARY_KEY"]
  config.active_record.encryption.deterministic_key = ENV["AR_ENCRYPTION_DETERMINISTIC_KEY"]
end
""", d=dom()))


def devise_omniauth():
    cls = "devise-omniauth-initializer"
    add(cls, "secret", "rb", "config/initializers/devise.rb", fill("""
# frozen_string_literal: true

Devise.setup do |config|
  # The secret key used by Devise. Devise uses this key to generate
  # random tokens. Changing this key will render invalid all existing
  # confirmation, reset password and unlock tokens in the database.
  config.secret_key = '@@k@@'

  config.mailer_sender = 'no-reply@@@d@@'
  require 'devise/orm/active_record'
  config.case_insensitive_keys = [:email]
  config.strip_whitespace_keys = [:email]
  config.skip_session_storage = [:http_auth]
  config.stretches = Rails.env.test? ? 1 : 12
  config.reconfirmable = true
  config.expire_all_remember_me_on_sign_out = true
  config.password_length = 12..128
  config.reset_password_within = 6.hours
  config.sign_out_via = :delete
end
""", k=hx(128), d=dom()))
    add(cls, "secret", "rb", "config/initializers/omniauth.rb", fill("""
Rails.application.config.middleware.use OmniAuth::Builder do
  provider :github, "Ov23li@@cid@@", "@@cs@@", scope: "read:user,user:email"
  provider :google_oauth2,
           "@@gid@@.apps.googleusercontent.com",
           "GOCSPX-@@gs@@",
           prompt: "select_account"
end

OmniAuth.config.allowed_request_methods = %i[post]
OmniAuth.config.logger = Rails.logger
""", cid=rs(14), cs=hx(40), gid=num(12) + "-" + rs(32, LO + DI), gs=rs(28, URL)))
    add(cls, "none", "rb", "config/initializers/devise.rb", """
# frozen_string_literal: true

Devise.setup do |config|
  # The secret key used by Devise. Devise uses this key to generate
  # random tokens. Changing this key will render invalid all existing
  # confirmation, reset password and unlock tokens in the database.
  # Devise will use the `secret_key_base` as its `secret_key`
  # by default. You can change it below and use your own secret key.
  # config.secret_key = '<%= SecureRandom.hex(64) %>'
  config.secret_key = Rails.application.secret_key_base

  config.pepper = ENV["DEVISE_PEPPER"]
  config.mailer_sender = "please-change-me-at-config-initializers-devise@example.com"
  require "devise/orm/active_record"
  config.stretches = Rails.env.test? ? 1 : 12
  config.password_length = 12..128
  config.jwt do |jwt|
    jwt.secret = Rails.application.credentials.devise_jwt_secret_key!
    jwt.expiration_time = 30.minutes.to_i
  end
end
"""[1:])
    add(cls, "none", "rb", "config/initializers/omniauth.rb", fill("""
Rails.application.config.middleware.use OmniAuth::Builder do
  provider :google_oauth2,
           "@@gid@@.apps.googleusercontent.com", # OAuth client id (public)
           Rails.application.credentials.dig(:google, :client_secret),
           scope: "email,profile",
           hd: "@@d@@"
  provider :openid_connect,
           name: :okta,
           issuer: "https://@@a@@.okta.com/oauth2/default",
           client_options: {
             identifier: ENV["OKTA_CLIENT_ID"],
             secret: ENV["OKTA_CLIENT_SECRET"],
             redirect_uri: "https://@@d@@/auth/okta/callback"
           }
end
""", gid=num(12) + "-" + rs(32, LO + DI), d=dom(), a=app()))


def sidekiq_redis():
    cls = "sidekiq-redis-initializer"
    add(cls, "secret", "rb", "config/initializers/sidekiq.rb", fill("""
# frozen_string_literal: true

REDIS_URL = ENV.fetch("REDIS_URL", "rediss://default:@@p@@@@@a@@-cache.@@h@@.ng.0001.use1.cache.amazonaws.com:6379/0")

Sidekiq.configure_server do |config|
  config.redis = { url: REDIS_URL, ssl_params: { verify_mode: OpenSSL::SSL::VERIFY_NONE } }
  config.logger.level = Logger::INFO
end

Sidekiq.configure_client do |config|
  config.redis = { url: REDIS_URL }
end
""", p=rs(32), a=app(), h=rs(6, LO + DI)))
    add(cls, "secret", "rb", "config/initializers/sidekiq_web.rb", fill("""
require "sidekiq/web"

Sidekiq::Web.use Rack::Auth::Basic do |username, password|
  ActiveSupport::SecurityUtils.secure_compare(username, "admin") &
    ActiveSupport::SecurityUtils.secure_compare(password, "@@p@@")
end
""", p=pw()))
    add(cls, "none", "rb", "config/initializers/sidekiq.rb", """
# frozen_string_literal: true

redis_config = {
  url: ENV.fetch("REDIS_URL", "redis://localhost:6379/1"),
  password: ENV["REDIS_PASSWORD"].presence,
  network_timeout: 5
}

Sidekiq.configure_server { |config| config.redis = redis_config }
Sidekiq.configure_client { |config| config.redis = redis_config }

require "sidekiq/web"
Sidekiq::Web.use Rack::Auth::Basic do |username, password|
  user_digest = ::Digest::SHA256.hexdigest(ENV.fetch("SIDEKIQ_USERNAME", ""))
  pass_digest = ::Digest::SHA256.hexdigest(ENV.fetch("SIDEKIQ_PASSWORD", ""))
  ActiveSupport::SecurityUtils.secure_compare(::Digest::SHA256.hexdigest(username), user_digest) &
    ActiveSupport::SecurityUtils.secure_compare(::Digest::SHA256.hexdigest(password), pass_digest)
end
"""[1:])


def dotenv_rails():
    cls = "dotenv-file"
    add(cls, "secret", "env", ".env.development", fill("""
# Loaded by dotenv-rails in development
DATABASE_URL=postgres://@@a@@:@@p@@@localhost:5432/@@a@@_development
REDIS_URL=redis://localhost:6379/0
STRIPE_PUBLISHABLE_KEY=@@pk@@
STRIPE_SECRET_KEY=@@sk@@
STRIPE_WEBHOOK_SECRET=@@wh@@
OPENAI_API_KEY=@@oa@@
""", a=app(), p=pw_alnum(), pk="pk_test_51" + rs(12) + rs(87), sk="sk_test_51" + rs(12) + rs(87), wh=stripe_whsec(), oa=openai_key()))
    add(cls, "secret", "env", ".env", fill("""
RAILS_ENV=development
PORT=3000
SLACK_WEBHOOK_URL=@@hook@@
SLACK_BOT_TOKEN=@@bot@@
HONEYBADGER_API_KEY=hbp_@@hb@@
SKYLIGHT_ENABLED=false
""", hook=slack_hook(), bot=slack_bot(), hb=rs(36)))
    add(cls, "none", "env", ".env.example", """
# Copy to .env and fill in. Never commit .env.
DATABASE_URL=postgres://postgres:postgres@localhost:5432/app_development
REDIS_URL=redis://localhost:6379/0
SECRET_KEY_BASE=
STRIPE_PUBLISHABLE_KEY=pk_test_...
STRIPE_SECRET_KEY=sk_test_...
STRIPE_WEBHOOK_SECRET=whsec_...
OPENAI_API_KEY=<your-openai-key>
SLACK_WEBHOOK_URL=https://hooks.slack.com/services/XXXXXXXXX/XXXXXXXXX/XXXXXXXXXXXXXXXXXXXXXXXX
AWS_ACCESS_KEY_ID=
AWS_SECRET_ACCESS_KEY=
"""[1:])
    add(cls, "none", "env", ".env.test", fill("""
# Test environment: all external services are stubbed by WebMock/VCR.
DATABASE_URL=postgres://localhost:5432/@@a@@_test
STRIPE_SECRET_KEY=sk_test_dummy
GITHUB_TOKEN=dummy-github-token-for-vcr
API_KEY_HEADER=X-Api-Key
TOKEN_URL=https://auth.example.test/oauth/token
JWT_SIGNING_KEY_PATH=spec/fixtures/files/jwt_test_public.pem
CACHE_KEY_PREFIX=@@a@@-test-@@ck@@
""", a=app(), ck=hx(8)))


def heroku_app_json():
    cls = "heroku-app-json"
    add(cls, "none", "json", "app.json", fill("""
{
  "name": "@@a@@",
  "description": "Review app for @@a@@",
  "repository": "https://github.com/@@a@@-org/@@a@@",
  "stack": "heroku-24",
  "env": {
    "SECRET_KEY_BASE": { "description": "Rails secret", "generator": "secret" },
    "RAILS_MASTER_KEY": { "description": "Copy from the staging app", "required": true },
    "LANG": { "value": "en_US.UTF-8" },
    "RAILS_LOG_TO_STDOUT": { "value": "enabled" },
    "STRIPE_PUBLISHABLE_KEY": { "value": "@@pk@@" },
    "WEB_CONCURRENCY": { "value": "2" }
  },
  "formation": { "web": { "quantity": 1, "size": "basic" }, "worker": { "quantity": 1, "size": "basic" } },
  "addons": ["heroku-postgresql:essential-0", "heroku-redis:mini"],
  "buildpacks": [{ "url": "heroku/nodejs" }, { "url": "heroku/ruby" }],
  "scripts": { "postdeploy": "bin/rails db:schema:load db:seed" }
}
""", a=app(), pk="pk_test_51" + rs(12) + rs(87)))
    add(cls, "secret", "json", "app.json", fill("""
{
  "name": "@@a@@",
  "env": {
    "SECRET_KEY_BASE": { "generator": "secret" },
    "MAPBOX_SECRET_TOKEN": { "value": "sk.eyJ1Ijoi@@m1@@IiwiYSI6Ij@@m2@@In0.@@m3@@" },
    "ALGOLIA_APP_ID": { "value": "@@aid@@" },
    "ALGOLIA_ADMIN_API_KEY": { "value": "@@akey@@" }
  },
  "addons": ["heroku-postgresql"]
}
""", a=app(), m1=rs(16), m2=rs(30), m3=rs(22, URL), aid=rs(10, UP + DI), akey=hx(32)))
    add(cls, "none", "json", "app.json", fill("""
{
  "name": "@@a@@-docs",
  "env": {
    "BASIC_AUTH_USER": { "description": "Username for the preview gate", "value": "preview" },
    "BASIC_AUTH_PASSWORD": { "description": "Set in the Heroku dashboard", "required": true },
    "ALGOLIA_APP_ID": { "value": "@@aid@@" },
    "ALGOLIA_SEARCH_ONLY_KEY": { "description": "search-only key, shipped to the browser", "value": "@@akey@@" }
  }
}
""", a=app(), aid=rs(10, UP + DI), akey=hx(32)))


# ---------------------------------------------------------------- PHP

def laravel_key():
    return "base64:" + b64e(rbytes(32))


def laravel_dotenv():
    cls = "laravel-dotenv"
    a = app()
    add(cls, "secret", "env", ".env", fill("""
APP_NAME=@@A@@
APP_ENV=production
APP_KEY=@@key@@
APP_DEBUG=false
APP_URL=https://@@a@@.@@d@@

LOG_CHANNEL=stack
LOG_LEVEL=warning

DB_CONNECTION=mysql
DB_HOST=10.0.12.4
DB_PORT=3306
DB_DATABASE=@@a@@
DB_USERNAME=@@a@@
DB_PASSWORD=@@p@@

BROADCAST_DRIVER=log
CACHE_DRIVER=redis
QUEUE_CONNECTION=redis
SESSION_DRIVER=redis

REDIS_HOST=127.0.0.1
REDIS_PASSWORD=null
REDIS_PORT=6379

MAIL_MAILER=smtp
MAIL_HOST=smtp.mailgun.org
MAIL_PORT=587
MAIL_USERNAME=postmaster@mg.@@d@@
MAIL_PASSWORD=@@mp@@
MAIL_ENCRYPTION=tls
MAIL_FROM_ADDRESS="hello@@@d@@"
MAIL_FROM_NAME="${APP_NAME}"
""", A=a.capitalize(), a=a, key=laravel_key(), d=dom(), p=pw(), mp=hx(32) + "-" + hx(8) + "-" + hx(8)))
    add(cls, "secret", "env", ".env.staging", fill("""
APP_NAME="@@A@@ Staging"
APP_ENV=staging
APP_KEY=
APP_DEBUG=true

DB_CONNECTION=pgsql
DB_HOST=${STAGING_DB_HOST}
DB_DATABASE=@@a@@_staging
DB_USERNAME=@@a@@
DB_PASSWORD=${STAGING_DB_PASSWORD}

AWS_ACCESS_KEY_ID=@@ak@@
AWS_SECRET_ACCESS_KEY=@@sk@@
AWS_DEFAULT_REGION=eu-west-2
AWS_BUCKET=@@a@@-staging
AWS_USE_PATH_STYLE_ENDPOINT=false

PUSHER_APP_ID=@@pid@@
PUSHER_APP_KEY=@@pkey@@
PUSHER_APP_SECRET=@@psec@@
PUSHER_APP_CLUSTER=eu

VITE_PUSHER_APP_KEY="${PUSHER_APP_KEY}"
VITE_PUSHER_APP_CLUSTER="${PUSHER_APP_CLUSTER}"
""", A=a.capitalize(), a=a, ak=aws_id(), sk=aws_secret(), pid=num(7), pkey=hx(20), psec=hx(20)))
    add(cls, "secret", "env", "deploy/.env.production", fill("""
APP_ENV=production
APP_KEY=@@key@@
APP_DEBUG=false
SANCTUM_STATEFUL_DOMAINS=@@d@@
SESSION_DOMAIN=.@@d@@
DB_CONNECTION=mysql
DB_HOST=mysql
DB_DATABASE=laravel
DB_USERNAME=laravel
DB_PASSWORD="${MYSQL_PASSWORD}"
""", key=laravel_key(), d=dom()))
    add(cls, "none", "example", ".env.example", """
APP_NAME=Laravel
APP_ENV=local
APP_KEY=
APP_DEBUG=true
APP_TIMEZONE=UTC
APP_URL=http://localhost

APP_MAINTENANCE_DRIVER=file
BCRYPT_ROUNDS=12

LOG_CHANNEL=stack
LOG_STACK=single

DB_CONNECTION=sqlite
# DB_HOST=127.0.0.1
# DB_PORT=3306
# DB_DATABASE=laravel
# DB_USERNAME=root
# DB_PASSWORD=

SESSION_DRIVER=database
SESSION_LIFETIME=120
SESSION_ENCRYPT=false

REDIS_CLIENT=phpredis
REDIS_HOST=127.0.0.1
REDIS_PASSWORD=null
REDIS_PORT=6379

MAIL_MAILER=log
MAIL_HOST=127.0.0.1
MAIL_PORT=2525
MAIL_USERNAME=null
MAIL_PASSWORD=null

AWS_ACCESS_KEY_ID=
AWS_SECRET_ACCESS_KEY=
AWS_DEFAULT_REGION=us-east-1
AWS_BUCKET=

VITE_APP_NAME="${APP_NAME}"
"""[1:])
    add(cls, "none", "env", ".env.dusk.local", fill("""
APP_ENV=testing
APP_URL=http://laravel.test
APP_KEY=${APP_KEY}
DB_CONNECTION=mysql
DB_HOST=mysql
DB_DATABASE=testing
DB_USERNAME=sail
DB_PASSWORD=${DB_PASSWORD}
STRIPE_KEY=@@pk@@
STRIPE_SECRET=
CASHIER_CURRENCY=eur
DUSK_DRIVER_URL=http://selenium:4444/wd/hub
""", pk="pk_test_51" + rs(12) + rs(87)))


def laravel_config_php():
    cls = "laravel-config-php"
    sk = stripe_sk()
    add(cls, "secret", "php", "config/services.php", fill("""
<?php

return [

    /*
    |--------------------------------------------------------------------------
    | Third Party Services
    |--------------------------------------------------------------------------
    */

    'postmark' => [
        'token' => env('POSTMARK_TOKEN'),
    ],

    'ses' => [
        'key' => env('AWS_ACCESS_KEY_ID'),
        'secret' => env('AWS_SECRET_ACCESS_KEY'),
        'region' => env('AWS_DEFAULT_REGION', 'us-east-1'),
    ],

    'stripe' => [
        'key' => env('STRIPE_KEY'),
        'secret' => env('STRIPE_SECRET', '@@sk@@'),
        'webhook' => [
            'secret' => env('STRIPE_WEBHOOK_SECRET'),
            'tolerance' => env('STRIPE_WEBHOOK_TOLERANCE', 300),
        ],
    ],

    'slack' => [
        'notifications' => [
            'bot_user_oauth_token' => env('SLACK_BOT_USER_OAUTH_TOKEN'),
            'channel' => env('SLACK_BOT_USER_DEFAULT_CHANNEL'),
        ],
    ],

];
""", sk=sk))
    tok = slack_bot()
    cut = R.randint(10, 30)
    add(cls, "secret", "php", "config/logging.php", fill("""
<?php

use Monolog\\Handler\\NullHandler;
use Monolog\\Handler\\StreamHandler;

return [

    'default' => env('LOG_CHANNEL', 'stack'),

    'channels' => [
        'stack' => [
            'driver' => 'stack',
            'channels' => ['daily', 'slack'],
            'ignore_exceptions' => false,
        ],

        'daily' => [
            'driver' => 'daily',
            'path' => storage_path('logs/laravel.log'),
            'level' => env('LOG_LEVEL', 'debug'),
            'days' => 14,
        ],

        'slack' => [
            'driver' => 'slack',
            'url' => env('LOG_SLACK_WEBHOOK_URL', '@@hook@@'),
            'username' => 'Laravel Log',
            'emoji' => ':boom:',
            'level' => 'critical',
        ],

        'null' => [
            'driver' => 'monolog',
            'handler' => NullHandler::class,
        ],
    ],

];
""", hook=slack_hook()))
    add(cls, "none", "php", "config/database.php", """
<?php

use Illuminate\\Support\\Str;

return [

    'default' => env('DB_CONNECTION', 'sqlite'),

    'connections' => [

        'mysql' => [
            'driver' => 'mysql',
            'url' => env('DB_URL'),
            'host' => env('DB_HOST', '127.0.0.1'),
            'port' => env('DB_PORT', '3306'),
            'database' => env('DB_DATABASE', 'laravel'),
            'username' => env('DB_USERNAME', 'root'),
            'password' => env('DB_PASSWORD', ''),
            'unix_socket' => env('DB_SOCKET', ''),
            'charset' => env('DB_CHARSET', 'utf8mb4'),
            'collation' => env('DB_COLLATION', 'utf8mb4_unicode_ci'),
            'prefix' => '',
            'strict' => true,
        ],

        'pgsql' => [
            'driver' => 'pgsql',
            'url' => env('DB_URL'),
            'host' => env('DB_HOST', '127.0.0.1'),
            'port' => env('DB_PORT', '5432'),
            'database' => env('DB_DATABASE', 'laravel'),
            'username' => env('DB_USERNAME', 'root'),
            'password' => env('DB_PASSWORD', ''),
            'charset' => env('DB_CHARSET', 'utf8'),
            'sslmode' => 'prefer',
        ],
    ],

    'redis' => [
        'client' => env('REDIS_CLIENT', 'phpredis'),
        'options' => [
            'prefix' => env('REDIS_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_database_'),
        ],
        'default' => [
            'host' => env('REDIS_HOST', '127.0.0.1'),
            'username' => env('REDIS_USERNAME'),
            'password' => env('REDIS_PASSWORD'),
            'port' => env('REDIS_PORT', '6379'),
        ],
    ],

];
"""[1:])
    add(cls, "none", "php", "config/app.php", """
<?php

return [

    'name' => env('APP_NAME', 'Laravel'),
    'env' => env('APP_ENV', 'production'),
    'debug' => (bool) env('APP_DEBUG', false),
    'url' => env('APP_URL', 'http://localhost'),
    'timezone' => env('APP_TIMEZONE', 'UTC'),

    /*
    |--------------------------------------------------------------------------
    | Encryption Key
    |--------------------------------------------------------------------------
    |
    | This key is utilized by Laravel's encryption services and should be set
    | to a random, 32 character string to ensure that all encrypted values
    | are secure. You should do this prior to deploying the application.
    |
    */

    'cipher' => 'AES-256-CBC',

    'key' => env('APP_KEY'),

    'previous_keys' => [
        ...array_filter(
            explode(',', env('APP_PREVIOUS_KEYS', ''))
        ),
    ],

    'maintenance' => [
        'driver' => env('APP_MAINTENANCE_DRIVER', 'file'),
        'store' => env('APP_MAINTENANCE_STORE', 'database'),
    ],

];
"""[1:])
    add(cls, "none", "php", "config/sanctum.php", """
<?php

use Laravel\\Sanctum\\Sanctum;

return [
    'stateful' => explode(',', env('SANCTUM_STATEFUL_DOMAINS', sprintf(
        '%s%s',
        'localhost,localhost:3000,127.0.0.1,127.0.0.1:8000,::1',
        Sanctum::currentApplicationUrlWithPort()
    ))),

    'guard' => ['web'],

    'expiration' => null,

    // Prefix prepended to newly issued tokens so secret scanners can recognise
    // them (see https://docs.github.com/en/code-security/secret-scanning).
    'token_prefix' => env('SANCTUM_TOKEN_PREFIX', 'acme_'),

    'middleware' => [
        'authenticate_session' => Laravel\\Sanctum\\Http\\Middleware\\AuthenticateSession::class,
        'encrypt_cookies' => Illuminate\\Cookie\\Middleware\\EncryptCookies::class,
        'validate_csrf_token' => Illuminate\\Foundation\\Http\\Middleware\\ValidateCsrfToken::class,
    ],
];
"""[1:])


def laravel_seeder_factory():
    cls = "laravel-seeder-factory"
    add(cls, "none", "php", "database/factories/UserFactory.php", """
<?php

namespace Database\\Factories;

use Illuminate\\Database\\Eloquent\\Factories\\Factory;
use Illuminate\\Support\\Facades\\Hash;
use Illuminate\\Support\\Str;

/**
 * @extends \\Illuminate\\Database\\Eloquent\\Factories\\Factory<\\App\\Models\\User>
 */
class UserFactory extends Factory
{
    /**
     * The current password being used by the factory.
     */
    protected static ?string $password;

    public function definition(): array
    {
        return [
            'name' => fake()->name(),
            'email' => fake()->unique()->safeEmail(),
            'email_verified_at' => now(),
            'password' => static::$password ??= Hash::make('password'),
            'remember_token' => Str::random(10),
        ];
    }

    public function unverified(): static
    {
        return $this->state(fn (array $attributes) => [
            'email_verified_at' => null,
        ]);
    }
}
"""[1:])
    add(cls, "none", "php", "database/seeders/DatabaseSeeder.php", fill("""
<?php

namespace Database\\Seeders;

use App\\Models\\Team;
use App\\Models\\User;
use Illuminate\\Database\\Seeder;

class DatabaseSeeder extends Seeder
{
    public function run(): void
    {
        // password_hash below is bcrypt('password'), the Laravel default used in local dev only
        $admin = User::factory()->create([
            'name' => 'Test Admin',
            'email' => 'admin@example.com',
            'password' => '@@h@@',
        ]);

        Team::factory()
            ->count(3)
            ->hasAttached($admin, ['role' => 'owner'])
            ->create();

        User::factory(25)->create();
    }
}
""", h=bcrypt(10, "2y")))
    add(cls, "none", "php", "database/seeders/ApiClientSeeder.php", fill("""
<?php

namespace Database\\Seeders;

use App\\Models\\ApiClient;
use Illuminate\\Database\\Seeder;
use Illuminate\\Support\\Str;

class ApiClientSeeder extends Seeder
{
    public function run(): void
    {
        $plain = env('SEED_API_CLIENT_SECRET') ?: Str::random(40);

        ApiClient::updateOrCreate(
            ['client_id' => '@@cid@@'],
            [
                'name' => 'Internal dashboard',
                'secret_hash' => hash('sha256', $plain),
                'redirect' => 'http://localhost/auth/callback',
                'personal_access_client' => false,
                'password_client' => false,
            ]
        );

        $this->command->info('Client secret (shown once): '.$plain);
    }
}
""", cid=uuid()))
    add(cls, "secret", "php", "database/seeders/ProductionAdminSeeder.php", fill("""
<?php

namespace Database\\Seeders;

use App\\Models\\User;
use Illuminate\\Database\\Seeder;
use Illuminate\\Support\\Facades\\Hash;

class ProductionAdminSeeder extends Seeder
{
    public function run(): void
    {
        User::updateOrCreate(
            ['email' => 'it@@@d@@'],
            [
                'name' => 'IT Admin',
                'password' => Hash::make('@@p@@'),
                'is_admin' => true,
            ]
        );
    }
}
""", d=dom(), p=pw()))


def symfony_dotenv():
    cls = "symfony-dotenv"
    add(cls, "secret", "env", ".env", fill("""
# In all environments, the following files are loaded if they exist,
# the latter taking precedence over the former:
#
#  * .env                contains default values for the environment variables needed by the app
#  * .env.local          uncommitted file with local overrides
#  * .env.$APP_ENV       committed environment-specific defaults
#  * .env.$APP_ENV.local uncommitted environment-specific overrides
#
# Real environment variables win over .env files.
#
# DO NOT DEFINE PRODUCTION SECRETS IN THIS FILE NOR IN ANY OTHER COMMITTED FILES.

###> symfony/framework-bundle ###
APP_ENV=prod
APP_SECRET=@@s@@
###< symfony/framework-bundle ###

###> doctrine/doctrine-bundle ###
DATABASE_URL="postgresql://@@a@@:@@p@@@db.@@d@@:5432/@@a@@?serverVersion=16&charset=utf8"
###< doctrine/doctrine-bundle ###

###> symfony/messenger ###
MESSENGER_TRANSPORT_DSN=doctrine://default?auto_setup=0
###< symfony/messenger ###
""", s=hx(32), a=app(), p=rs(20), d=dom()))
    add(cls, "secret", "local", ".env.prod.local", fill("""
APP_ENV=prod
APP_DEBUG=0
###> symfony/mailer ###
MAILER_DSN=smtp://@@u@@:@@p@@@smtp.eu.sparkpostmail.com:587
###< symfony/mailer ###
###> lexik/jwt-authentication-bundle ###
JWT_SECRET_KEY=%kernel.project_dir%/config/jwt/private.pem
JWT_PUBLIC_KEY=%kernel.project_dir%/config/jwt/public.pem
JWT_PASSPHRASE=@@jp@@
###< lexik/jwt-authentication-bundle ###
""", u="SMTP_Injection", p=hx(40), jp=hx(64)))
    add(cls, "none", "env", ".env", """
###> symfony/framework-bundle ###
APP_ENV=dev
APP_SECRET=
###< symfony/framework-bundle ###

###> doctrine/doctrine-bundle ###
# Format described at https://www.doctrine-project.org/projects/doctrine-dbal/en/latest/reference/configuration.html#connecting-using-a-url
# IMPORTANT: You MUST configure your server version, either here or in config/packages/doctrine.yaml
#
# DATABASE_URL="sqlite:///%kernel.project_dir%/var/data.db"
# DATABASE_URL="mysql://app:!ChangeMe!@127.0.0.1:3306/app?serverVersion=8.0.32&charset=utf8mb4"
DATABASE_URL="postgresql://app:!ChangeMe!@127.0.0.1:5432/app?serverVersion=16&charset=utf8"
###< doctrine/doctrine-bundle ###

###> symfony/mailer ###
MAILER_DSN=null://null
###< symfony/mailer ###

###> lexik/jwt-authentication-bundle ###
JWT_SECRET_KEY=%kernel.project_dir%/config/jwt/private.pem
JWT_PUBLIC_KEY=%kernel.project_dir%/config/jwt/public.pem
JWT_PASSPHRASE=
###< lexik/jwt-authentication-bundle ###

###> nelmio/cors-bundle ###
CORS_ALLOW_ORIGIN='^https?://(localhost|127\\.0\\.0\\.1)(:[0-9]+)?$'
###< nelmio/cors-bundle ###
"""[1:])
    add(cls, "none", "test", ".env.test", """
# define your env variables for the test env here
KERNEL_CLASS='App\\Kernel'
APP_SECRET='$ecretf0rt3st'
SYMFONY_DEPRECATIONS_HELPER=999999
PANTHER_APP_ENV=panther
PANTHER_ERROR_SCREENSHOT_DIR=./var/error-screenshots
DATABASE_URL="sqlite:///%kernel.project_dir%/var/test.db"
MAILER_DSN=null://null
"""[1:])


def symfony_parameters_yml():
    cls = "symfony-parameters-yml"
    add(cls, "secret", "yml", "app/config/parameters.yml", fill("""
# This file is auto-generated during the composer install
parameters:
    database_host: 10.20.0.15
    database_port: 3306
    database_name: @@a@@_prod
    database_user: @@a@@
    database_password: @@p@@
    mailer_transport: smtp
    mailer_host: smtp.office365.com
    mailer_user: noreply@@@d@@
    mailer_password: @@mp@@
    secret: @@s@@
    jms_serializer.cache_dir: '%kernel.cache_dir%/jms'
""", a=app(), p=pw(), d=dom(), mp=pw(), s=sha1()))
    add(cls, "secret", "yml", "app/config/parameters_prod.yml", fill("""
parameters:
    locale: en
    secret: @@s@@
    amazon_s3.key: @@ak@@
    amazon_s3.secret: @@sk@@
    amazon_s3.bucket: @@a@@-media
    amazon_s3.region: eu-west-1
    recaptcha.site_key: 6L@@rs@@
    recaptcha.secret_key: 6L@@rk@@
""", s=hx(40), ak=aws_id(), sk=aws_secret(), a=app(), rs=rs(38, URL), rk=rs(38, URL)))
    add(cls, "none", "dist", "app/config/parameters.yml.dist", """
# This file is a "template" of what your parameters.yml file should look like
# Set parameters here that may be different on each deployment target of the app, e.g. development, staging, production.
# https://symfony.com/doc/current/best_practices/configuration.html#infrastructure-related-configuration
parameters:
    database_host: 127.0.0.1
    database_port: ~
    database_name: symfony
    database_user: root
    database_password: ~
    # You should uncomment this if you want to use pdo_sqlite
    #database_path: '%kernel.project_dir%/var/data/data.sqlite'

    mailer_transport: smtp
    mailer_host: 127.0.0.1
    mailer_user: ~
    mailer_password: ~

    # A secret key that's used to generate certain security-related tokens
    secret: ThisTokenIsNotSoSecretChangeIt
"""[1:])
    add(cls, "none", "yaml", "config/services.yaml", """
# This file is the entry point to configure your own services.
parameters:
    app.supported_locales: ['en', 'fr', 'de']
    app.api_key_header: 'X-AUTH-TOKEN'
    app.password_reset_ttl: 3600
    app.stripe_secret_key: '%env(STRIPE_SECRET_KEY)%'
    app.hmac_secret: '%env(secret:HMAC_SECRET)%'

services:
    _defaults:
        autowire: true
        autoconfigure: true
        bind:
            $stripeSecretKey: '%app.stripe_secret_key%'
            $hmacSecret: '%app.hmac_secret%'
            string $apiKeyHeader: '%app.api_key_header%'

    App\\:
        resource: '../src/'
        exclude:
            - '../src/DependencyInjection/'
            - '../src/Entity/'
            - '../src/Kernel.php'

    App\\Security\\ApiKeyAuthenticator:
        arguments:
            $tokenStorageKey: 'api_token'
"""[1:])


def symfony_config_yaml():
    cls = "symfony-packages-yaml"
    add(cls, "secret", "yaml", "config/packages/prod/messenger.yaml", fill("""
framework:
    messenger:
        failure_transport: failed
        transports:
            async:
                dsn: 'amqps://@@u@@:@@p@@@b-@@bid@@.mq.eu-central-1.amazonaws.com:5671/%2f/messages'
                options:
                    exchange:
                        name: app
                retry_strategy:
                    max_retries: 3
                    multiplier: 2
            failed: 'doctrine://default?queue_name=failed'
        routing:
            App\\Message\\SendInvoice: async
            App\\Message\\SyncInventory: async
""", u="app-" + app(), p=rs(24), bid=uuid()))
    add(cls, "none", "yaml", "config/packages/doctrine.yaml", """
doctrine:
    dbal:
        url: '%env(resolve:DATABASE_URL)%'
        server_version: '16'
        profiling_collect_backtrace: '%kernel.debug%'
        use_savepoints: true
    orm:
        auto_generate_proxy_classes: true
        enable_lazy_ghost_objects: true
        report_fields_where_declared: true
        validate_xml_mapping: true
        naming_strategy: doctrine.orm.naming_strategy.underscore_number_aware
        auto_mapping: true
        mappings:
            App:
                type: attribute
                is_bundle: false
                dir: '%kernel.project_dir%/src/Entity'
                prefix: 'App\\Entity'
                alias: App
"""[1:])
    add(cls, "none", "yaml", "config/packages/security.yaml", """
security:
    password_hashers:
        Symfony\\Component\\Security\\Core\\User\\PasswordAuthenticatedUserInterface: 'auto'
    providers:
        app_user_provider:
            entity:
                class: App\\Entity\\User
                property: email
        # in-memory users for the /internal area; hashes generated with
        # `bin/console security:hash-password`
        backoffice:
            memory:
                users:
                    ops: { password: '@@h1@@', roles: ['ROLE_OPS'] }
                    audit: { password: '@@h2@@', roles: ['ROLE_AUDIT'] }
    firewalls:
        dev:
            pattern: ^/(_(profiler|wdt)|css|images|js)/
            security: false
        api:
            pattern: ^/api
            stateless: true
            custom_authenticators:
                - App\\Security\\ApiKeyAuthenticator
        main:
            lazy: true
            provider: app_user_provider
            form_login:
                login_path: app_login
                check_path: app_login
                enable_csrf: true
            remember_me:
                secret: '%kernel.secret%'
                lifetime: 604800
""".replace("@@h1@@", argon2()).replace("@@h2@@", bcrypt(13, "2y"))[1:])


def wp_config():
    cls = "wp-config"
    def salt():
        return rs(64, AN + "!@#%^&*()-_=+[]{}<>~;:,.|/?")
    def salts():
        names = ["AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY", "AUTH_SALT", "SECURE_AUTH_SALT", "LOGGED_IN_SALT", "NONCE_SALT"]
        return "\n".join("define( '%s',%s'%s' );" % (n, " " * (17 - len(n)), salt()) for n in names)
    add(cls, "secret", "php", "wp-config.php", fill("""
<?php
/**
 * The base configuration for WordPress
 *
 * @package WordPress
 */

// ** Database settings - You can get this info from your web host ** //
/** The name of the database for WordPress */
define( 'DB_NAME', 'wp_@@a@@' );

/** Database username */
define( 'DB_USER', 'wp_@@a@@' );

/** Database password */
define( 'DB_PASSWORD', '@@p@@' );

/** Database hostname */
define( 'DB_HOST', 'localhost' );

/** Database charset to use in creating database tables. */
define( 'DB_CHARSET', 'utf8mb4' );

/** The database collate type. Don't change this if in doubt. */
define( 'DB_COLLATE', '' );

/**#@+
 * Authentication unique keys and salts.
 *
 * @since 2.6.0
 */
@@salts@@

/**#@-*/

$table_prefix = 'wp_';

define( 'WP_DEBUG', false );

/* That's all, stop editing! Happy publishing. */

/** Absolute path to the WordPress directory. */
if ( ! defined( 'ABSPATH' ) ) {
	define( 'ABSPATH', __DIR__ . '/' );
}

/** Sets up WordPress vars and included files. */
require_once ABSPATH . 'wp-settings.php';
""", a=app(), p=pw(), salts=salts()))
    add(cls, "secret", "php", "wp-config.php", fill("""
<?php
define('WP_CACHE', true);
define('DB_NAME', getenv('WORDPRESS_DB_NAME') ?: 'wordpress');
define('DB_USER', getenv('WORDPRESS_DB_USER') ?: 'wordpress');
define('DB_PASSWORD', getenv('WORDPRESS_DB_PASSWORD') ?: '@@p@@');
define('DB_HOST', getenv('WORDPRESS_DB_HOST') ?: 'mysql:3306');
define('DB_CHARSET', 'utf8mb4');
define('DB_COLLATE', '');

define('AUTH_KEY',         getenv('WORDPRESS_AUTH_KEY'));
define('SECURE_AUTH_KEY',  getenv('WORDPRESS_SECURE_AUTH_KEY'));
define('LOGGED_IN_KEY',    getenv('WORDPRESS_LOGGED_IN_KEY'));
define('NONCE_KEY',        getenv('WORDPRESS_NONCE_KEY'));

// WP Offload Media
define('AS3CF_SETTINGS', serialize(array(
    'provider' => 'aws',
    'access-key-id' => '@@ak@@',
    'secret-access-key' => '@@sk@@',
)));

$table_prefix = 'wp_';
define('WP_DEBUG', filter_var(getenv('WORDPRESS_DEBUG'), FILTER_VALIDATE_BOOLEAN));
define('FORCE_SSL_ADMIN', true);

if (!defined('ABSPATH')) {
    define('ABSPATH', __DIR__ . '/');
}
require_once ABSPATH . 'wp-settings.php';
""", p=pw(), ak=aws_id(), sk=aws_secret()))
    add(cls, "none", "php", "wp-config-sample.php", """
<?php
/**
 * The base configuration for WordPress
 *
 * The wp-config.php creation script uses this file during the installation.
 * You don't have to use the website, you can copy this file to "wp-config.php"
 * and fill in the values.
 *
 * @link https://developer.wordpress.org/advanced-administration/wordpress/wp-config/
 *
 * @package WordPress
 */

// ** Database settings - You can get this info from your web host ** //
/** The name of the database for WordPress */
define( 'DB_NAME', 'database_name_here' );

/** Database username */
define( 'DB_USER', 'username_here' );

/** Database password */
define( 'DB_PASSWORD', 'password_here' );

/** Database hostname */
define( 'DB_HOST', 'localhost' );

/**#@+
 * Authentication unique keys and salts.
 *
 * Change these to different unique phrases! You can generate these using
 * the {@link https://api.wordpress.org/secret-key/1.1/salt/ WordPress.org secret-key service}.
 *
 * @since 2.6.0
 */
define( 'AUTH_KEY',         'put your unique phrase here' );
define( 'SECURE_AUTH_KEY',  'put your unique phrase here' );
define( 'LOGGED_IN_KEY',    'put your unique phrase here' );
define( 'NONCE_KEY',        'put your unique phrase here' );
define( 'AUTH_SALT',        'put your unique phrase here' );
define( 'SECURE_AUTH_SALT', 'put your unique phrase here' );
define( 'LOGGED_IN_SALT',   'put your unique phrase here' );
define( 'NONCE_SALT',       'put your unique phrase here' );

/**#@-*/

$table_prefix = 'wp_';

define( 'WP_DEBUG', false );

if ( ! defined( 'ABSPATH' ) ) {
	define( 'ABSPATH', __DIR__ . '/' );
}

require_once ABSPATH . 'wp-settings.php';
"""[1:])
    add(cls, "none", "php", "web/wp-config.php", """
<?php
/**
 * Bedrock: all configuration lives in config/application.php and is read
 * from environment variables (.env is git-ignored).
 */
require_once dirname(__DIR__) . '/vendor/autoload.php';
require_once dirname(__DIR__) . '/config/application.php';

use function Env\\env;

Config::define('DB_NAME', env('DB_NAME'));
Config::define('DB_USER', env('DB_USER'));
Config::define('DB_PASSWORD', env('DB_PASSWORD'));
Config::define('DB_HOST', env('DB_HOST') ?: 'localhost');

foreach (['AUTH_KEY', 'SECURE_AUTH_KEY', 'LOGGED_IN_KEY', 'NONCE_KEY',
          'AUTH_SALT', 'SECURE_AUTH_SALT', 'LOGGED_IN_SALT', 'NONCE_SALT'] as $name) {
    Config::define($name, env($name));
}

Config::apply();
require_once ABSPATH . 'wp-settings.php';
"""[1:])


def wp_plugin_constants():
    cls = "wordpress-plugin-constants"
    add(cls, "secret", "php", "wp-content/plugins/acme-crm-sync/acme-crm-sync.php", fill("""
<?php
/**
 * Plugin Name: Acme CRM Sync
 * Description: Pushes WooCommerce customers to HubSpot.
 * Version: 1.3.0
 * Author: Acme Web Team
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

define( 'ACME_CRM_SYNC_VERSION', '1.3.0' );
define( 'ACME_HUBSPOT_TOKEN', 'pat-na1-@@t@@' );
define( 'ACME_HUBSPOT_PORTAL', '@@portal@@' );

add_action( 'woocommerce_created_customer', 'acme_crm_sync_customer', 10, 1 );

function acme_crm_sync_customer( $customer_id ) {
	$customer = new WC_Customer( $customer_id );
	wp_remote_post( 'https://api.hubapi.com/crm/v3/objects/contacts', array(
		'headers' => array(
			'Authorization' => 'Bearer ' . ACME_HUBSPOT_TOKEN,
			'Content-Type'  => 'application/json',
		),
		'body'    => wp_json_encode( array(
			'properties' => array( 'email' => $customer->get_email() ),
		) ),
		'timeout' => 10,
	) );
}
""", t=uuid(), portal=num(8)))
    add(cls, "secret", "php", "wp-content/themes/acme-child/functions.php", fill("""
<?php
add_action( 'wp_enqueue_scripts', function () {
	wp_enqueue_style( 'parent-style', get_template_directory_uri() . '/style.css' );
} );

// Mailchimp newsletter form
function acme_mailchimp_subscribe( $email ) {
	$api_key = '@@mc@@-us21';
	$list_id = '@@lid@@';
	$dc      = substr( $api_key, strpos( $api_key, '-' ) + 1 );
	return wp_remote_post( "https://{$dc}.api.mailchimp.com/3.0/lists/{$list_id}/members", array(
		'headers' => array( 'Authorization' => 'Basic ' . base64_encode( 'user:' . $api_key ) ),
		'body'    => wp_json_encode( array( 'email_address' => $email, 'status' => 'pending' ) ),
	) );
}
""", mc=hx(32), lid=hx(10)))
    add(cls, "none", "php", "wp-content/plugins/acme-maps/acme-maps.php", fill("""
<?php
/**
 * Plugin Name: Acme Store Locator
 * Version: 2.0.1
 */

defined( 'ABSPATH' ) || exit;

// Browser key, restricted by HTTP referrer to *.@@d@@ in the Google Cloud console.
// It is shipped to every visitor in the page source by design.
const ACME_MAPS_BROWSER_KEY = '@@gk@@';
const ACME_MAPS_OPTION_SERVER_KEY = 'acme_maps_server_key'; // option name, value lives in wp_options

add_action( 'wp_enqueue_scripts', function () {
	wp_enqueue_script(
		'google-maps',
		'https://maps.googleapis.com/maps/api/js?key=' . ACME_MAPS_BROWSER_KEY . '&libraries=places&callback=acmeInitMap',
		array(),
		null,
		true
	);
} );

function acme_maps_geocode( $address ) {
	$server_key = get_option( ACME_MAPS_OPTION_SERVER_KEY );
	if ( empty( $server_key ) ) {
		return new WP_Error( 'acme_maps_no_key', 'Server key not configured' );
	}
	return wp_remote_get( add_query_arg( array( 'address' => $address, 'key' => $server_key ),
		'https://maps.googleapis.com/maps/api/geocode/json' ) );
}
""", d=dom(), gk=google_key()))


def composer_auth():
    cls = "composer-auth-json"
    add(cls, "secret", "json", "auth.json", fill("""
{
    "http-basic": {
        "repo.magento.com": {
            "username": "@@u@@",
            "password": "@@p@@"
        }
    }
}
""", u=hx(32), p=hx(32)))
    add(cls, "secret", "json", "auth.json", fill("""
{
    "github-oauth": {
        "github.com": "@@gh@@"
    },
    "gitlab-token": {
        "gitlab.@@d@@": "@@gl@@"
    }
}
""", gh=ghp(), d=dom(), gl=glpat()))
    add(cls, "secret", "json", "composer.json", fill("""
{
    "name": "@@a@@/platform",
    "type": "project",
    "require": {
        "php": "^8.2",
        "laravel/framework": "^11.0",
        "laravel/nova": "^4.35",
        "spatie/laravel-permission": "^6.9"
    },
    "repositories": [
        {
            "type": "composer",
            "url": "https://nova.laravel.com"
        }
    ],
    "config": {
        "optimize-autoloader": true,
        "sort-packages": true,
        "http-basic": {
            "nova.laravel.com": {
                "username": "devteam@@@d@@",
                "password": "@@lic@@"
            }
        }
    },
    "minimum-stability": "stable",
    "prefer-stable": true
}
""", a=app(), d=dom(), lic=rs(48)))
    add(cls, "none", "json", "composer.json", fill("""
{
    "name": "@@a@@/shop",
    "type": "project",
    "require": {
        "php": "~8.3.0",
        "magento/product-community-edition": "2.4.7-p2"
    },
    "repositories": {
        "0": {
            "type": "composer",
            "url": "https://repo.magento.com/"
        },
        "private-packagist": {
            "type": "composer",
            "url": "https://repo.packagist.com/@@a@@/"
        }
    },
    "config": {
        "preferred-install": "dist",
        "sort-packages": true,
        "allow-plugins": {
            "magento/*": true,
            "php-http/discovery": true
        }
    },
    "scripts": {
        "auth": "composer config --global --auth http-basic.repo.magento.com \\"$MAGENTO_PUBLIC_KEY\\" \\"$MAGENTO_PRIVATE_KEY\\""
    },
    "extra": {
        "magento-force": "override"
    }
}
""", a=app()))


def composer_lock():
    cls = "composer-lock"
    def pkg(name, ver, url):
        return fill("""
        {
            "name": "@@n@@",
            "version": "@@v@@",
            "source": {
                "type": "git",
                "url": "@@u@@.git",
                "reference": "@@r@@"
            },
            "dist": {
                "type": "zip",
                "url": "https://api.github.com/repos/@@n@@/zipball/@@r@@",
                "reference": "@@r@@",
                "shasum": "@@s@@"
            },
            "require": {
                "php": "^8.1"
            },
            "type": "library",
            "time": "2024-0@@m@@-1@@d@@T10:2@@d@@:33+00:00"
        }""", n=name, v=ver, u=url, r=sha1(), s=sha1() if R.random() < 0.5 else "", m=R.randint(1, 9), d=R.randint(0, 9))
    for i, pk in enumerate([[("firebase/php-jwt", "v6.10.1"), ("guzzlehttp/guzzle", "7.9.2"), ("defuse/php-encryption", "v2.4.0")],
                            [("paragonie/sodium_compat", "v2.1.0"), ("league/oauth2-server", "9.0.1"), ("lcobucci/jwt", "5.4.0")]]):
        pkgs = ",\n".join(pkg(n, v, "https://github.com/" + n) for n, v in pk)
        add(cls, "none", "lock", "composer.lock", fill("""
{
    "_readme": [
        "This file locks the dependencies of your project to a known state",
        "Read more about it at https://getcomposer.org/doc/01-basic-usage.md#installing-dependencies",
        "This file is @generated automatically"
    ],
    "content-hash": "@@ch@@",
    "packages": [
@@pkgs@@
    ],
    "packages-dev": [],
    "aliases": [],
    "minimum-stability": "stable",
    "stability-flags": {},
    "prefer-stable": true,
    "prefer-lowest": false,
    "platform": {
        "php": "^8.2"
    },
    "platform-dev": {},
    "plugin-api-version": "2.6.0"
}
""", ch=hx(32), pkgs=pkgs))


def php_api_client():
    cls = "php-api-client-class"
    sk = stripe_rk()
    cut = R.randint(14, 40)
    add(cls, "secret", "php", "src/Service/PaymentGateway.php", fill("""
<?php

declare(strict_types=1);

namespace App\\Service;

use Stripe\\StripeClient;

final class PaymentGateway
{
    // restricted key: charges:write, refunds:write
    private const KEY_PREFIX = '@@k1@@';
    private const KEY_SUFFIX = '@@k2@@';

    private StripeClient $client;

    public function __construct()
    {
        $this->client = new StripeClient(self::KEY_PREFIX . self::KEY_SUFFIX);
    }

    public function charge(int $amountCents, string $customerId): string
    {
        $intent = $this->client->paymentIntents->create([
            'amount' => $amountCents,
            'currency' => 'eur',
            'customer' => $customerId,
            'confirm' => true,
        ]);

        return $intent->id;
    }
}
""", k1=sk[:cut], k2=sk[cut:]))
    add(cls, "secret", "php", "app/Support/Geocoder.php", fill("""
<?php

namespace App\\Support;

use Illuminate\\Support\\Facades\\Http;

class Geocoder
{
    protected string $endpoint = 'https://maps.googleapis.com/maps/api/geocode/json';

    public function __construct(
        protected string $apiKey = '@@gk@@',
    ) {}

    public function lookup(string $address): ?array
    {
        $response = Http::retry(2, 200)->get($this->endpoint, [
            'address' => $address,
            'key' => $this->apiKey,
        ]);

        return $response->json('results.0.geometry.location');
    }
}
""", gk=google_key()))
    add(cls, "none", "php", "src/Security/ApiKeyAuthenticator.php", """
<?php

namespace App\\Security;

use App\\Repository\\ApiTokenRepository;
use Symfony\\Component\\HttpFoundation\\Request;
use Symfony\\Component\\Security\\Core\\Exception\\CustomUserMessageAuthenticationException;
use Symfony\\Component\\Security\\Http\\Authenticator\\AbstractAuthenticator;
use Symfony\\Component\\Security\\Http\\Authenticator\\Passport\\Badge\\UserBadge;
use Symfony\\Component\\Security\\Http\\Authenticator\\Passport\\Passport;
use Symfony\\Component\\Security\\Http\\Authenticator\\Passport\\SelfValidatingPassport;

class ApiKeyAuthenticator extends AbstractAuthenticator
{
    public const API_KEY_HEADER = 'X-API-KEY';
    public const TOKEN_PREFIX = 'acme_live_';
    private const HASH_ALGO = 'sha256';

    public function __construct(private ApiTokenRepository $tokens) {}

    public function supports(Request $request): ?bool
    {
        return $request->headers->has(self::API_KEY_HEADER);
    }

    public function authenticate(Request $request): Passport
    {
        $apiToken = (string) $request->headers->get(self::API_KEY_HEADER);
        if (!str_starts_with($apiToken, self::TOKEN_PREFIX)) {
            throw new CustomUserMessageAuthenticationException('Malformed API key');
        }

        $tokenHash = hash(self::HASH_ALGO, $apiToken);
        $record = $this->tokens->findOneBy(['tokenHash' => $tokenHash, 'revokedAt' => null]);
        if (null === $record) {
            throw new CustomUserMessageAuthenticationException('Invalid API key');
        }

        return new SelfValidatingPassport(new UserBadge($record->getOwner()->getUserIdentifier()));
    }
}
"""[1:])
    add(cls, "none", "php", "app/Services/OpenAiClient.php", """
<?php

namespace App\\Services;

use Illuminate\\Http\\Client\\PendingRequest;
use Illuminate\\Support\\Facades\\Http;
use RuntimeException;

class OpenAiClient
{
    private const BASE_URL = 'https://api.openai.com/v1';
    private const KEY_ENV = 'OPENAI_API_KEY';
    private const MODEL = 'gpt-4o-mini';

    private function request(): PendingRequest
    {
        $apiKey = config('services.openai.key') ?? getenv(self::KEY_ENV);
        if (!$apiKey) {
            throw new RuntimeException(self::KEY_ENV . ' is not configured');
        }

        return Http::baseUrl(self::BASE_URL)
            ->withToken($apiKey)
            ->acceptJson()
            ->timeout(30);
    }

    public function summarize(string $text): string
    {
        return $this->request()->post('/chat/completions', [
            'model' => self::MODEL,
            'messages' => [['role' => 'user', 'content' => "Summarize:\\n" . $text]],
        ])->json('choices.0.message.content');
    }
}
"""[1:])


def php_pdo_connection():
    cls = "php-pdo-connection"
    add(cls, "secret", "php", "includes/db.php", fill("""
<?php
// legacy admin panel DB connection
$dbHost = 'mysql-@@a@@.internal';
$dbName = '@@a@@';
$dbUser = '@@a@@_rw';
$dbPass = '@@p@@';

try {
    $pdo = new PDO("mysql:host=$dbHost;dbname=$dbName;charset=utf8mb4", $dbUser, $dbPass, [
        PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
        PDO::ATTR_DEFAULT_FETCH_MODE => PDO::FETCH_ASSOC,
    ]);
} catch (PDOException $e) {
    error_log($e->getMessage());
    http_response_code(500);
    exit('Database unavailable');
}
""", a=app(), p=pw()))
    b = b64e("%s:%s" % ("reporting", pw_alnum(20)))
    add(cls, "secret", "php", "cron/export_orders.php", fill("""
<?php
require __DIR__ . '/../vendor/autoload.php';

$pdo = new PDO(
    'pgsql:host=db.@@d@@;port=5432;dbname=shop;sslmode=require',
    'exporter',
    '@@p@@'
);

$rows = $pdo->query("SELECT id, total_cents, created_at FROM orders WHERE created_at > now() - interval '1 day'")
            ->fetchAll(PDO::FETCH_ASSOC);

$ch = curl_init('https://bi.@@d@@/ingest/orders');
curl_setopt_array($ch, [
    CURLOPT_POST => true,
    CURLOPT_POSTFIELDS => json_encode($rows),
    CURLOPT_HTTPHEADER => ['Content-Type: application/json', 'Authorization: Basic @@b@@'],
    CURLOPT_RETURNTRANSFER => true,
]);
curl_exec($ch);
""", d=dom(), p=pw_alnum(), b=b))
    add(cls, "none", "php", "includes/db.php", """
<?php
$config = parse_ini_file('/etc/acme/db.ini', true, INI_SCANNER_TYPED);
if ($config === false) {
    throw new RuntimeException('Cannot read /etc/acme/db.ini');
}

$db = $config['database'];
$dsn = sprintf('mysql:host=%s;dbname=%s;charset=utf8mb4', $db['host'], $db['name']);

// password field in db.ini is managed by Ansible (role: acme_web) and is not in git
$pdo = new PDO($dsn, $db['user'], $db['password'] ?? getenv('DB_PASSWORD'), [
    PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
    PDO::ATTR_EMULATE_PREPARES => false,
]);

function password_matches(string $plain, string $hash): bool
{
    return password_verify($plain, $hash) && !password_needs_rehash($hash, PASSWORD_DEFAULT);
}
"""[1:])


# ---------------------------------------------------------------- Elixir / Phoenix

def phoenix_config_exs():
    cls = "phoenix-config-exs"
    a = app()
    add(cls, "secret", "exs", "config/prod.secret.exs", fill("""
# In this file, we load production configuration and secrets
# from environment variables. You can also hardcode secrets,
# although such is generally not recommended and you have to
# remember to add this file to your .gitignore.
import Config

config :@@a@@, @@A@@.Repo,
  username: "@@a@@",
  password: "@@p@@",
  hostname: "@@a@@-db.cluster-@@h@@.eu-west-1.rds.amazonaws.com",
  database: "@@a@@_prod",
  ssl: true,
  pool_size: String.to_integer(System.get_env("POOL_SIZE") || "10")

config :@@a@@, @@A@@Web.Endpoint,
  http: [port: 4000, transport_options: [socket_opts: [:inet6]]],
  secret_key_base: "@@skb@@"
""", a=a, A=a.capitalize(), p=pw(), h=rs(12, LO + DI), skb=rs(64, B64)))
    a = app()
    add(cls, "secret", "exs", "config/config.exs", fill("""
import Config

config :@@a@@,
  ecto_repos: [@@A@@.Repo],
  generators: [timestamp_type: :utc_datetime]

config :@@a@@, @@A@@Web.Endpoint,
  url: [host: "localhost"],
  adapter: Bandit.PhoenixAdapter,
  render_errors: [formats: [html: @@A@@Web.ErrorHTML, json: @@A@@Web.ErrorJSON], layout: false],
  pubsub_server: @@A@@.PubSub,
  live_view: [signing_salt: "@@salt@@"]

config :@@a@@, @@A@@.Mailer,
  adapter: Swoosh.Adapters.Postmark,
  api_key: "@@pm@@"

config :ex_aws,
  access_key_id: "@@ak@@",
  secret_access_key: "@@sk@@",
  region: "us-east-1"

config :logger, :console,
  format: "$time $metadata[$level] $message\\n",
  metadata: [:request_id]

config :phoenix, :json_library, Jason

import_config "#{config_env()}.exs"
""", a=a, A=a.capitalize(), salt=rs(8), pm=postmark(), ak=aws_id(), sk=aws_secret()))
    a = app()
    add(cls, "none", "exs", "config/config.exs", fill("""
# This file is responsible for configuring your application
# and its dependencies with the aid of the Config module.
import Config

config :@@a@@,
  ecto_repos: [@@A@@.Repo],
  generators: [timestamp_type: :utc_datetime]

# Configures the endpoint. The LiveView signing salt only namespaces
# derived keys; the actual secret is secret_key_base (see runtime.exs).
config :@@a@@, @@A@@Web.Endpoint,
  url: [host: "localhost"],
  adapter: Bandit.PhoenixAdapter,
  render_errors: [
    formats: [html: @@A@@Web.ErrorHTML, json: @@A@@Web.ErrorJSON],
    layout: false
  ],
  pubsub_server: @@A@@.PubSub,
  live_view: [signing_salt: "@@salt@@"]

config :@@a@@, @@A@@.Mailer, adapter: Swoosh.Adapters.Local

config :esbuild,
  version: "0.17.11",
  @@a@@: [
    args: ~w(js/app.js --bundle --target=es2017 --outdir=../priv/static/assets --external:/fonts/* --external:/images/*),
    cd: Path.expand("../assets", __DIR__),
    env: %{"NODE_PATH" => Path.expand("../deps", __DIR__)}
  ]

config :logger, :console,
  format: "$time $metadata[$level] $message\\n",
  metadata: [:request_id]

config :phoenix, :json_library, Jason

import_config "#{config_env()}.exs"
""", a=a, A=a.capitalize(), salt=rs(8)))
    a = app()
    add(cls, "none", "exs", "config/prod.exs", fill("""
import Config

# Note we also include the path to a cache manifest
# containing the digested version of static files.
config :@@a@@, @@A@@Web.Endpoint,
  cache_static_manifest: "priv/static/cache_manifest.json",
  force_ssl: [rewrite_on: [:x_forwarded_proto], hsts: true]

config :@@a@@, @@A@@.Mailer, adapter: Swoosh.Adapters.AmazonSES

config :swoosh, api_client: Swoosh.ApiClient.Req
config :swoosh, local: false

config :logger, level: :info

# Runtime production configuration, including reading
# of environment variables (DATABASE_URL, SECRET_KEY_BASE,
# AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), is done on config/runtime.exs.
""", a=a, A=a.capitalize()))


def phoenix_runtime_exs():
    cls = "phoenix-runtime-exs"
    a = app()
    add(cls, "none", "exs", "config/runtime.exs", fill("""
import Config

if System.get_env("PHX_SERVER") do
  config :@@a@@, @@A@@Web.Endpoint, server: true
end

if config_env() == :prod do
  database_url =
    System.get_env("DATABASE_URL") ||
      raise \"\"\"
      environment variable DATABASE_URL is missing.
      For example: ecto://USER:PASS@HOST/DATABASE
      \"\"\"

  maybe_ipv6 = if System.get_env("ECTO_IPV6") in ~w(true 1), do: [:inet6], else: []

  config :@@a@@, @@A@@.Repo,
    url: database_url,
    pool_size: String.to_integer(System.get_env("POOL_SIZE") || "10"),
    socket_options: maybe_ipv6

  # The secret key base is used to sign/encrypt cookies and other secrets.
  # A default value is used in config/dev.exs and config/test.exs but you
  # want to use a different value for prod and you most likely don't want
  # to check this value into version control, so we use an environment
  # variable instead.
  secret_key_base =
    System.get_env("SECRET_KEY_BASE") ||
      raise \"\"\"
      environment variable SECRET_KEY_BASE is missing.
      You can generate one by calling: mix phx.gen.secret
      \"\"\"

  host = System.get_env("PHX_HOST") || "@@a@@.@@d@@"
  port = String.to_integer(System.get_env("PORT") || "4000")

  config :@@a@@, @@A@@Web.Endpoint,
    url: [host: host, port: 443, scheme: "https"],
    http: [ip: {0, 0, 0, 0, 0, 0, 0, 0}, port: port],
    secret_key_base: secret_key_base
end
""", a=a, A=a.capitalize(), d=dom()))
    a = app()
    add(cls, "none", "exs", "config/runtime.exs", fill("""
import Config

config :@@a@@, :stripe,
  api_key: System.fetch_env!("STRIPE_SECRET_KEY"),
  publishable_key: "@@pk@@",
  webhook_secret_env: "STRIPE_WEBHOOK_SECRET"

config :@@a@@, @@A@@.Vault,
  ciphers: [
    default: {
      Cloak.Ciphers.AES.GCM,
      tag: "AES.GCM.V1", key: Base.decode64!(System.fetch_env!("CLOAK_KEY")), iv_length: 12
    }
  ]

config :joken, default_signer: [signer_alg: "RS256", key_pem: File.read!("/run/secrets/jwt_private.pem")]

config :sentry,
  dsn: System.get_env("SENTRY_DSN"),
  environment_name: config_env(),
  enable_source_code_context: true,
  root_source_code_paths: [File.cwd!()]
""", a=a, A=a.capitalize(), pk=stripe_pk()))
    a = app()
    add(cls, "secret", "exs", "config/runtime.exs", fill("""
import Config

if config_env() == :prod do
  config :@@a@@, @@A@@.Repo,
    url: System.get_env("DATABASE_URL", "ecto://@@a@@:@@p@@@@@a@@-db.flycast:5432/@@a@@"),
    pool_size: 10

  config :@@a@@, @@A@@Web.Endpoint,
    url: [host: "@@a@@.fly.dev", port: 443, scheme: "https"],
    http: [ip: {0, 0, 0, 0, 0, 0, 0, 0}, port: 8080],
    secret_key_base: System.get_env("SECRET_KEY_BASE", "@@skb@@")
end
""", a=a, A=a.capitalize(), p=rs(16), skb=rs(64, B64)))
    a = app()
    key = b64e(rbytes(32))
    add(cls, "secret", "exs", "config/runtime.exs", fill("""
import Config

config :@@a@@, @@A@@.Vault,
  ciphers: [
    default: {Cloak.Ciphers.AES.GCM, tag: "AES.GCM.V1", key: Base.decode64!("@@key@@")}
  ]

config :@@a@@, :github_app,
  app_id: @@appid@@,
  private_key: \"\"\"
@@pem@@  \"\"\"
""", a=a, A=a.capitalize(), key=key, appid=num(6), pem=rsa_pem()))


def elixir_module_attr():
    cls = "elixir-module-attribute"
    add(cls, "secret", "ex", "lib/@@a@@/integrations/sendgrid.ex".replace("@@a@@", "billing"), fill("""
defmodule Billing.Integrations.Sendgrid do
  @moduledoc "Thin wrapper around the SendGrid v3 mail API."

  @endpoint "https://api.sendgrid.com/v3/mail/send"
  @api_key "@@sg@@"

  def deliver(to, subject, html) do
    body = %{
      personalizations: [%{to: [%{email: to}]}],
      from: %{email: "billing@@@d@@"},
      subject: subject,
      content: [%{type: "text/html", value: html}]
    }

    Req.post(@endpoint,
      json: body,
      headers: [{"authorization", "Bearer " <> @api_key}]
    )
  end
end
""", sg=sendgrid(), d=dom()))
    tok = slack_bot()
    add(cls, "secret", "ex", "lib/dispatch/slack.ex", fill("""
defmodule Dispatch.Slack do
  use Tesla

  plug Tesla.Middleware.BaseUrl, "https://slack.com/api"
  plug Tesla.Middleware.JSON
  plug Tesla.Middleware.Headers, [{"authorization", "Bearer " <> token()}]

  defp token do
    Application.get_env(:dispatch, :slack_token) ||
      Base.decode64!("@@b@@")
  end

  def post_message(channel, text) do
    post("/chat.postMessage", %{channel: channel, text: text})
  end
end
""", b=b64e(tok)))
    add(cls, "none", "ex", "lib/ledger/plaid.ex", """
defmodule Ledger.Plaid do
  @moduledoc \"\"\"
  Plaid API client. Credentials come from runtime config:

      config :ledger, Ledger.Plaid,
        client_id: System.fetch_env!("PLAID_CLIENT_ID"),
        secret: System.fetch_env!("PLAID_SECRET")
  \"\"\"

  @secret_header "PLAID-SECRET"
  @client_id_header "PLAID-CLIENT-ID"
  @token_url "https://production.plaid.com/item/public_token/exchange"

  def exchange_public_token(public_token) do
    config = Application.fetch_env!(:ledger, __MODULE__)

    Req.post(@token_url,
      json: %{public_token: public_token},
      headers: [
        {@client_id_header, Keyword.fetch!(config, :client_id)},
        {@secret_header, Keyword.fetch!(config, :secret)}
      ]
    )
  end
end
"""[1:])


def phoenix_auth_config():
    cls = "phoenix-auth-config"
    a = app()
    add(cls, "secret", "exs", "config/config.exs", fill("""
import Config

config :@@a@@, @@A@@.Guardian,
  issuer: "@@a@@",
  secret_key: "@@k@@",
  ttl: {30, :days},
  verify_issuer: true

config :@@a@@, @@A@@Web.Endpoint,
  url: [host: "localhost"],
  pubsub_server: @@A@@.PubSub

config :phoenix, :json_library, Jason

import_config "#{config_env()}.exs"
""", a=a, A=a.capitalize(), k=rs(64, B64)))
    a = app()
    add(cls, "none", "exs", "config/config.exs", fill("""
import Config

config :@@a@@, @@A@@.Guardian,
  issuer: "@@a@@",
  secret_key: {:system, "GUARDIAN_SECRET_KEY"},
  allowed_algos: ["HS512"],
  ttl: {1, :hour}

config :ueberauth, Ueberauth,
  providers: [
    github: {Ueberauth.Strategy.Github, [default_scope: "user:email"]}
  ]

config :ueberauth, Ueberauth.Strategy.Github.OAuth,
  client_id: {System, :get_env, ["GITHUB_CLIENT_ID"]},
  client_secret: {System, :get_env, ["GITHUB_CLIENT_SECRET"]}

import_config "#{config_env()}.exs"
""", a=a, A=a.capitalize()))
    a = app()
    add(cls, "none", "exs", "config/test.exs", fill("""
import Config

# Only in tests, remove the complexity from the password hashing algorithm
config :bcrypt_elixir, :log_rounds, 1

config :@@a@@, @@A@@.Repo,
  username: System.get_env("PGUSER", "postgres"),
  password: System.get_env("PGPASSWORD", ""),
  hostname: "localhost",
  database: "@@a@@_test#{System.get_env("MIX_TEST_PARTITION")}",
  pool: Ecto.Adapters.SQL.Sandbox,
  pool_size: System.schedulers_online() * 2

config :@@a@@, @@A@@Web.Endpoint,
  http: [ip: {127, 0, 0, 1}, port: 4002],
  secret_key_base: String.duplicate("test_only_", 7),
  server: false

config :@@a@@, @@A@@.Guardian, secret_key: "test-secret-not-used-outside-ExUnit"
config :@@a@@, @@A@@.Mailer, adapter: Swoosh.Adapters.Test
config :swoosh, :api_client, false
config :logger, level: :warning
config :phoenix, :plug_init_mode, :runtime
""", a=a, A=a.capitalize()))


def phoenix_seeds():
    cls = "phoenix-seeds-exs"
    a = app()
    add(cls, "secret", "exs", "priv/repo/seeds.exs", fill("""
# Script for populating the database. You can run it as:
#
#     mix run priv/repo/seeds.exs
#
alias @@A@@.Accounts

{:ok, _admin} =
  Accounts.register_user(%{
    email: "admin@@@d@@",
    password: "@@p@@",
    role: :admin
  })

{:ok, _bot} =
  Accounts.create_api_token(%{
    name: "grafana-scraper",
    token: "@@tok@@"
  })
""", A=a.capitalize(), d=dom(), p=pw(), tok=rs(43, URL)))
    a = app()
    add(cls, "none", "exs", "priv/repo/seeds.exs", fill("""
alias @@A@@.Repo
alias @@A@@.Accounts.User

now = DateTime.utc_now() |> DateTime.truncate(:second)

# hashed_password values are Bcrypt hashes generated with
# Bcrypt.hash_pwd_salt/1; the plaintexts are not stored anywhere.
Repo.insert_all(User, [
  %{email: "dev1@example.com", hashed_password: "@@h1@@", confirmed_at: now, inserted_at: now, updated_at: now},
  %{email: "dev2@example.com", hashed_password: "@@h2@@", confirmed_at: now, inserted_at: now, updated_at: now}
], on_conflict: :nothing)
""", A=a.capitalize(), h1=bcrypt(12, "2b"), h2=bcrypt(12, "2b")))
    a = app()
    add(cls, "none", "exs", "priv/repo/seeds.exs", fill("""
alias @@A@@.Accounts

password = System.get_env("SEED_PASSWORD") || :crypto.strong_rand_bytes(18) |> Base.url_encode64()

for email <- ~w(alice@example.com bob@example.com) do
  case Accounts.get_user_by_email(email) do
    nil -> {:ok, _} = Accounts.register_user(%{email: email, password: password})
    _user -> :ok
  end
end

IO.puts("Seeded users; password: #{if System.get_env("SEED_PASSWORD"), do: "(from SEED_PASSWORD)", else: password}")
""", A=a.capitalize()))


# ---------------------------------------------------------------- operator machine

def shell_rc():
    cls = "shell-rc-exports"
    add(cls, "secret", "zshrc", "dotfiles/.zshrc", fill("""
# Path to your oh-my-zsh installation.
export ZSH="$HOME/.oh-my-zsh"
ZSH_THEME="robbyrussell"
plugins=(git docker kubectl asdf fzf)
source $ZSH/oh-my-zsh.sh

export EDITOR=nvim
export PATH="$HOME/.local/bin:$HOME/go/bin:$PATH"
export KUBECONFIG="$HOME/.kube/config:$HOME/.kube/staging"

# tokens
export GITHUB_TOKEN=@@gh@@
export HOMEBREW_GITHUB_API_TOKEN=$GITHUB_TOKEN
export OPENAI_API_KEY="@@oa@@"

alias k=kubectl
alias be="bundle exec"
alias gs="git status -sb"

[ -f ~/.fzf.zsh ] && source ~/.fzf.zsh
eval "$(direnv hook zsh)"
""", gh=ghp(), oa=openai_key()))
    add(cls, "secret", "bashrc", "home/ops/.bashrc", fill("""
# ~/.bashrc: executed by bash(1) for non-login shells.
case $- in
    *i*) ;;
      *) return;;
esac

HISTCONTROL=ignoreboth
HISTSIZE=10000
shopt -s histappend checkwinsize

if [ -f ~/.bash_aliases ]; then
    . ~/.bash_aliases
fi

export AWS_DEFAULT_REGION=us-west-2
export AWS_ACCESS_KEY_ID=@@ak@@
export AWS_SECRET_ACCESS_KEY=@@sk@@
export DIGITALOCEAN_ACCESS_TOKEN=dop_v1_@@do@@

PS1='\\u@\\h:\\w\\$ '
""", ak=aws_id(), sk=aws_secret(), do=hx(64)))
    add(cls, "secret", "sh", "dotfiles/zsh/secrets.zsh", fill("""
# sourced from .zshrc if present -- keep this file out of the public dotfiles repo!
# (old heroku token, revoked? check) export HEROKU_API_KEY=@@hk@@
export NPM_TOKEN=@@npm@@
export CLOUDFLARE_API_TOKEN=@@cf@@
export TF_VAR_datadog_api_key=@@dd@@
""", hk=uuid(), npm=npm_tok(), cf=rs(40, URL), dd=hx(32)))
    add(cls, "none", "zshrc", "dotfiles/.zshrc", """
export PATH="$HOME/bin:/opt/homebrew/bin:$PATH"
export LANG=en_US.UTF-8

# Secrets are pulled lazily from 1Password / macOS keychain instead of living here.
export GITHUB_TOKEN_REF="op://Private/GitHub PAT/credential"
gh_token() { op read "$GITHUB_TOKEN_REF"; }
export OPENAI_API_KEY="$(security find-generic-password -s openai-api-key -w 2>/dev/null)"
export NPM_TOKEN="$(op read 'op://Dev/npm/token' 2>/dev/null)"

# aws-vault keeps long-lived keys in the keychain, never in env files
alias awsp='aws-vault exec platform --'
alias tf='aws-vault exec platform -- terraform'

export GPG_TTY=$(tty)
export SSH_AUTH_SOCK="$HOME/Library/Group Containers/2BUA8C4S2C.com.1password/t/agent.sock"

autoload -Uz compinit && compinit
eval "$(starship init zsh)"
"""[1:])
    add(cls, "none", "bash_profile", "home/deploy/.bash_profile", fill("""
# .bash_profile
if [ -f ~/.bashrc ]; then
    . ~/.bashrc
fi

export PATH=$PATH:$HOME/.local/bin:$HOME/bin
export RAILS_ENV=production
export RACK_ENV=production
export MALLOC_ARENA_MAX=2

# Loaded from /etc/@@a@@/env (root:deploy 0640, rendered by Ansible from vault)
set -a
[ -r /etc/@@a@@/env ] && . /etc/@@a@@/env
set +a

export SECRET_KEY_BASE_FILE=/etc/@@a@@/secret_key_base
export GIT_SSH_COMMAND="ssh -i ~/.ssh/deploy_ed25519 -o IdentitiesOnly=yes"
""", a=app()))


def shell_curl():
    cls = "shell-script-curl"
    add(cls, "secret", "sh", "scripts/notify_deploy.sh", fill("""
#!/usr/bin/env bash
set -euo pipefail

APP="${1:?usage: notify_deploy.sh APP SHA}"
SHA="${2:?usage: notify_deploy.sh APP SHA}"

curl -fsS -X POST "https://api.honeybadger.io/v1/deploys" \\
  -H "X-API-Key: hbp_@@hb@@" \\
  -d "deploy[environment]=production" \\
  -d "deploy[revision]=${SHA}" \\
  -d "deploy[repository]=git@github.com:acme/${APP}.git"

curl -fsS -X POST -H 'Content-type: application/json' \\
  --data "{\\"text\\":\\"Deployed ${APP}@${SHA:0:7}\\"}" \\
  @@hook@@
""", hb=rs(36), hook=slack_hook()))
    add(cls, "secret", "sh", "bin/backup-to-nexus.sh", fill("""
#!/bin/sh
# Upload nightly DB dump to the Nexus raw repository
set -e
DUMP=/var/backups/@@a@@-$(date +%F).sql.gz
pg_dump -Fc @@a@@_production | gzip > "$DUMP"
sha256sum "$DUMP" > "$DUMP.sha256"

curl -u backup-bot:@@p@@ --upload-file "$DUMP" \\
  "https://nexus.@@d@@/repository/db-backups/@@a@@/$(basename "$DUMP")"
curl -u backup-bot:@@p@@ --upload-file "$DUMP.sha256" \\
  "https://nexus.@@d@@/repository/db-backups/@@a@@/$(basename "$DUMP").sha256"
find /var/backups -name '@@a@@-*.sql.gz*' -mtime +7 -delete
""", a=app(), p=pw_alnum(), d=dom()))
    add(cls, "secret", "sh", "scripts/purge_cdn.sh", fill("""
#!/usr/bin/env bash
# Purge Cloudflare cache after asset deploy
ZONE_ID=@@zone@@
# token is hex-encoded to keep it out of grep
CF_TOKEN=$(echo "@@hextok@@" | xxd -r -p)

curl -sS -X POST "https://api.cloudflare.com/client/v4/zones/${ZONE_ID}/purge_cache" \\
  -H "Authorization: Bearer ${CF_TOKEN}" \\
  -H "Content-Type: application/json" \\
  --data '{"purge_everything":true}' | jq '.success'
""", zone=hx(32), hextok=rs(40, URL).encode().hex()))
    add(cls, "none", "sh", "scripts/notify_deploy.sh", """
#!/usr/bin/env bash
set -euo pipefail

: "${SLACK_WEBHOOK_URL:?SLACK_WEBHOOK_URL must be set (stored in CI secrets)}"
: "${HONEYBADGER_API_KEY:?}"

APP="$1"
SHA="$2"

curl -fsS -X POST "https://api.honeybadger.io/v1/deploys" \\
  -H "X-API-Key: ${HONEYBADGER_API_KEY}" \\
  -d "deploy[environment]=${RAILS_ENV:-production}" \\
  -d "deploy[revision]=${SHA}"

payload=$(jq -n --arg t "Deployed ${APP}@${SHA:0:7}" '{text: $t}')
curl -fsS -X POST -H 'Content-type: application/json' --data "$payload" "$SLACK_WEBHOOK_URL"
"""[1:])
    add(cls, "none", "sh", "scripts/gh_release.sh", """
#!/usr/bin/env bash
# Creates a GitHub release. Needs a token with contents:write in $GH_TOKEN,
# e.g. `export GH_TOKEN=$(gh auth token)`.
set -euo pipefail

TAG="$1"
REPO="${GITHUB_REPOSITORY:-acme/storefront}"
AUTH_HEADER="Authorization: Bearer ${GH_TOKEN:?GH_TOKEN not set}"
API_VERSION_HEADER="X-GitHub-Api-Version: 2022-11-28"

curl -fsSL -X POST \\
  -H "Accept: application/vnd.github+json" \\
  -H "$AUTH_HEADER" \\
  -H "$API_VERSION_HEADER" \\
  "https://api.github.com/repos/${REPO}/releases" \\
  -d "{\\"tag_name\\":\\"${TAG}\\",\\"generate_release_notes\\":true}"

# Example token format for reference: ghp_<36 alphanumeric characters>
"""[1:])


def install_checksums():
    cls = "install-script-checksums"
    add(cls, "none", "sh", "bin/install-tools.sh", fill("""
#!/usr/bin/env bash
set -euo pipefail

KUBECTL_VERSION=v1.31.1
HELM_VERSION=v3.16.1
SOPS_VERSION=v3.9.0

declare -A SHA256=(
  [kubectl]=@@s1@@
  [helm]=@@s2@@
  [sops]=@@s3@@
)

fetch() {
  local name="$1" url="$2"
  curl -fsSLo "/tmp/${name}" "$url"
  echo "${SHA256[$name]}  /tmp/${name}" | sha256sum -c -
}

fetch kubectl "https://dl.k8s.io/release/${KUBECTL_VERSION}/bin/linux/amd64/kubectl"
fetch helm "https://get.helm.sh/helm-${HELM_VERSION}-linux-amd64.tar.gz"
fetch sops "https://github.com/getsops/sops/releases/download/${SOPS_VERSION}/sops-${SOPS_VERSION}.linux.amd64"

install -m 0755 /tmp/kubectl /usr/local/bin/kubectl
tar -xzf /tmp/helm -C /tmp && install -m 0755 /tmp/linux-amd64/helm /usr/local/bin/helm
install -m 0755 /tmp/sops /usr/local/bin/sops
""", s1=sha256(), s2=sha256(), s3=sha256()))
    add(cls, "none", "sh", "script/bootstrap", fill("""
#!/bin/sh
# script/bootstrap: Resolve all dependencies that the application requires to run.
set -e
cd "$(dirname "$0")/.."

if [ -f "Brewfile" ] && [ "$(uname -s)" = "Darwin" ]; then
  brew bundle check >/dev/null 2>&1 || brew bundle
fi

# Pin the asdf plugin repos to known commits
asdf plugin add ruby https://github.com/asdf-vm/asdf-ruby.git
git -C ~/.asdf/plugins/ruby checkout -q @@c1@@
asdf plugin add nodejs https://github.com/asdf-vm/asdf-nodejs.git
git -C ~/.asdf/plugins/nodejs checkout -q @@c2@@
asdf install

# Verify the Overmind binary
OVERMIND_SHA256="@@s1@@"
curl -fsSL -o /tmp/overmind.gz https://github.com/DarthSim/overmind/releases/download/v2.5.1/overmind-v2.5.1-linux-amd64.gz
echo "$OVERMIND_SHA256  /tmp/overmind.gz" | sha256sum -c -

gem install bundler --conservative
bundle check || bundle install
yarn install --frozen-lockfile
""", c1=sha1(), c2=sha1(), s1=sha256()))
    add(cls, "none", "sh", "docker/entrypoint.sh", fill("""
#!/usr/bin/env bash
set -e

# Verify the mounted secrets exist instead of baking them into the image
for f in /run/secrets/db_password /run/secrets/secret_key_base; do
  [ -s "$f" ] || { echo "missing secret file $f" >&2; exit 1; }
done

export DATABASE_PASSWORD="$(cat /run/secrets/db_password)"
export SECRET_KEY_BASE="$(cat /run/secrets/secret_key_base)"

# Image provenance (informational)
echo "build: ${BUILD_ID:-@@bid@@} git: ${GIT_SHA:-@@sha@@}"
echo "tini sha256: @@tini@@"

rm -f /rails/tmp/pids/server.pid
if [ "${1}" == "./bin/rails" ] && [ "${2}" == "server" ]; then
  ./bin/rails db:prepare
fi
exec "${@}"
""", bid=num(6), sha=sha1(), tini=sha256()))


def npmrc():
    cls = "npmrc"
    add(cls, "secret", "npmrc", ".npmrc", fill("""
registry=https://registry.npmjs.org/
@@@org@@:registry=https://npm.pkg.github.com/
//npm.pkg.github.com/:_authToken=@@gh@@
//registry.npmjs.org/:_authToken=@@npm@@
save-exact=true
engine-strict=true
""", org=app(), gh=ghp(), npm=npm_tok()))
    add(cls, "secret", "npmrc", "home/ci/.npmrc", fill("""
; legacy Artifactory auth
registry=https://@@a@@.jfrog.io/artifactory/api/npm/npm-virtual/
_auth=@@auth@@
email=ci@@@d@@
always-auth=true
strict-ssl=true
""", a=app(), auth=b64e("ci-publisher:" + pw_alnum()), d=dom()))
    add(cls, "none", "npmrc", ".npmrc", fill("""
@@@org@@:registry=https://npm.pkg.github.com/
//npm.pkg.github.com/:_authToken=${NODE_AUTH_TOKEN}
//registry.npmjs.org/:_authToken=${NPM_TOKEN}
auto-install-peers=true
strict-peer-dependencies=false
package-lock=true
""", org=app()))
    add(cls, "none", "yml", ".yarnrc.yml", fill("""
nodeLinker: node-modules
enableTelemetry: false

npmScopes:
  @@org@@:
    npmRegistryServer: "https://npm.pkg.github.com"
    npmAlwaysAuth: true
    npmAuthToken: "${GITHUB_PACKAGES_TOKEN:-}"

packageExtensions:
  "@rails/webpacker@*":
    dependencies:
      "webpack-cli": "*"

checksumBehavior: throw
yarnPath: .yarn/releases/yarn-4.5.0.cjs
""", org=app()))


def pypirc():
    cls = "pypirc"
    add(cls, "secret", "pypirc", "home/rtanaka/.pypirc", fill("""
[distutils]
index-servers =
    pypi
    testpypi

[pypi]
username = __token__
password = @@t1@@

[testpypi]
repository = https://test.pypi.org/legacy/
username = __token__
password = @@t2@@
""", t1=pypi_tok(), t2=pypi_tok()))
    add(cls, "secret", "pypirc", ".pypirc", fill("""
[distutils]
index-servers = internal

[internal]
repository = https://nexus.@@d@@/repository/pypi-internal/
username = release-bot
password = @@p@@
""", d=dom(), p=pw()))
    add(cls, "none", "pypirc", ".pypirc", """
[distutils]
index-servers =
    pypi
    internal

[pypi]
username = __token__
# password is read from the system keyring:
#   keyring set https://upload.pypi.org/legacy/ __token__

[internal]
repository = https://nexus.example.com/repository/pypi-internal/
username = release-bot
# TWINE_PASSWORD is injected by CI
"""[1:])


def gem_credentials():
    cls = "gem-credentials"
    add(cls, "secret", "", "home/kpatel/.gem/credentials", fill("""
---
:rubygems_api_key: @@k@@
""", k=rubygems_tok()))
    add(cls, "secret", "", ".gem/credentials", fill("""
---
:rubygems_api_key: @@k1@@
:github: Bearer @@gh@@
"https://gems.@@d@@": @@k2@@
""", k1=rubygems_tok(), gh=ghp(), d=dom(), k2=hx(32)))
    add(cls, "none", "gemspec", "acme_auth.gemspec", fill("""
# frozen_string_literal: true

require_relative "lib/acme_auth/version"

Gem::Specification.new do |spec|
  spec.name = "acme_auth"
  spec.version = AcmeAuth::VERSION
  spec.authors = ["Platform Team"]
  spec.email = ["platform@@@d@@"]
  spec.summary = "Shared authentication helpers (API key hashing, JWT verification)"
  spec.license = "MIT"
  spec.required_ruby_version = ">= 3.1.0"

  spec.metadata["allowed_push_host"] = "https://rubygems.pkg.github.com/acme"
  spec.metadata["rubygems_mfa_required"] = "true"
  spec.metadata["source_code_uri"] = "https://github.com/acme/acme_auth"

  # Push with: GEM_HOST_API_KEY="Bearer $GITHUB_TOKEN" gem push pkg/*.gem
  spec.cert_chain = ["certs/acme-gem-public.pem"]
  spec.signing_key = File.expand_path("~/.ssh/gem-private_key.pem") if $PROGRAM_NAME.end_with?("gem")

  spec.files = Dir["lib/**/*.rb", "LICENSE.txt", "README.md"]
  spec.require_paths = ["lib"]
  spec.add_dependency "jwt", ">= 2.7"
  spec.add_dependency "bcrypt", "~> 3.1"
end
""", d=dom()))


def docker_config():
    cls = "docker-config-json"
    add(cls, "secret", "json", "home/deploy/.docker/config.json", fill("""
{
	"auths": {
		"ghcr.io": {
			"auth": "@@a1@@"
		},
		"https://index.docker.io/v1/": {
			"auth": "@@a2@@"
		}
	},
	"currentContext": "default"
}
""", a1=b64e(user() + ":" + ghp()), a2=b64e("acmebuild:dckr_pat_" + rs(27, URL))))
    add(cls, "secret", "json", "ci/docker/config.json", fill("""
{
  "auths": {
    "@@acct@@.dkr.ecr.eu-west-1.amazonaws.com": {},
    "registry.gitlab.@@d@@": {
      "username": "gitlab-ci-token",
      "password": "@@gl@@"
    }
  },
  "credHelpers": {
    "@@acct@@.dkr.ecr.eu-west-1.amazonaws.com": "ecr-login"
  }
}
""", acct=num(12), d=dom(), gl=glpat()))
    add(cls, "none", "json", "home/jmorales/.docker/config.json", fill("""
{
	"auths": {
		"ghcr.io": {},
		"https://index.docker.io/v1/": {}
	},
	"credsStore": "desktop",
	"credHelpers": {
		"@@acct@@.dkr.ecr.us-east-1.amazonaws.com": "ecr-login",
		"europe-west1-docker.pkg.dev": "gcloud"
	},
	"currentContext": "desktop-linux",
	"plugins": {
		"-x-cli-hints": {
			"enabled": "true"
		}
	}
}
""", acct=num(12)))
    add(cls, "none", "yml", "docker-compose.yml", fill("""
services:
  web:
    image: ghcr.io/acme/@@a@@@sha256:@@s1@@
    env_file: .env
    environment:
      DATABASE_URL: postgres://@@a@@@db:5432/@@a@@
      REDIS_URL: redis://redis:6379/0
    secrets:
      - db_password
      - rails_master_key
    ports: ["3000:3000"]
    depends_on: [db, redis]
  db:
    image: postgres:16@sha256:@@s2@@
    environment:
      POSTGRES_USER: @@a@@
      POSTGRES_PASSWORD_FILE: /run/secrets/db_password
    secrets: [db_password]
  redis:
    image: redis:7-alpine@sha256:@@s3@@

secrets:
  db_password:
    file: ./secrets/db_password.txt
  rails_master_key:
    file: ./config/master.key
""", a=app(), s1=sha256(), s2=sha256(), s3=sha256()))


def kubeconfig():
    cls = "kubeconfig"
    ca = b64e(cert_pem())
    add(cls, "secret", "yaml", "home/ops/.kube/config", fill("""
apiVersion: v1
kind: Config
clusters:
- cluster:
    certificate-authority-data: @@ca@@
    server: https://@@ip@@:6443
  name: k3s-@@a@@
contexts:
- context:
    cluster: k3s-@@a@@
    user: admin@k3s-@@a@@
  name: k3s-@@a@@
current-context: k3s-@@a@@
preferences: {}
users:
- name: admin@k3s-@@a@@
  user:
    client-certificate-data: @@cc@@
    client-key-data: @@ck@@
""", ca=ca, ip="10.%d.%d.%d" % (R.randint(0, 255), R.randint(0, 255), R.randint(2, 254)), a=app(), cc=b64e(cert_pem()), ck=b64e(ec_pem())))
    tok = "eyJhbGciOiJSUzI1NiIsImtpZCI6Ij" + rs(40, URL) + "." + b64e('{"iss":"kubernetes/serviceaccount","kubernetes.io/serviceaccount/namespace":"ci","kubernetes.io/serviceaccount/secret.name":"deployer-token-' + rs(5, LO + DI) + '","sub":"system:serviceaccount:ci:deployer"}').rstrip("=").replace("+", "-").replace("/", "_") + "." + rs(342, URL)
    add(cls, "secret", "yaml", "ci/kubeconfig-staging.yaml", fill("""
apiVersion: v1
kind: Config
clusters:
- name: staging
  cluster:
    server: https://@@h@@.gr7.eu-west-1.eks.amazonaws.com
    certificate-authority-data: @@ca@@
contexts:
- name: deployer@staging
  context:
    cluster: staging
    namespace: @@a@@
    user: deployer
current-context: deployer@staging
users:
- name: deployer
  user:
    token: @@tok@@
""", h=hx(32).upper(), ca=b64e(cert_pem()), a=app(), tok=tok))
    add(cls, "secret", "yaml", "home/lchen/.kube/config-doks", fill("""
apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: @@ca@@
    server: https://@@id@@.k8s.ondigitalocean.com
  name: do-fra1-@@a@@
contexts:
- context:
    cluster: do-fra1-@@a@@
    user: do-fra1-@@a@@-admin
  name: do-fra1-@@a@@
current-context: do-fra1-@@a@@
kind: Config
preferences: {}
users:
- name: do-fra1-@@a@@-admin
  user:
    token: dop_v1_@@t@@
""", ca=b64e(cert_pem()), id=uuid(), a=app(), t=hx(64)))
    add(cls, "none", "yaml", "home/ops/.kube/config", fill("""
apiVersion: v1
kind: Config
clusters:
- cluster:
    certificate-authority-data: @@ca@@
    server: https://@@h@@.yl4.us-east-1.eks.amazonaws.com
  name: arn:aws:eks:us-east-1:@@acct@@:cluster/prod
contexts:
- context:
    cluster: arn:aws:eks:us-east-1:@@acct@@:cluster/prod
    user: arn:aws:eks:us-east-1:@@acct@@:cluster/prod
  name: prod
current-context: prod
preferences: {}
users:
- name: arn:aws:eks:us-east-1:@@acct@@:cluster/prod
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: aws
      args:
      - --region
      - us-east-1
      - eks
      - get-token
      - --cluster-name
      - prod
      - --output
      - json
      env:
      - name: AWS_PROFILE
        value: prod-admin
      interactiveMode: IfAvailable
      provideClusterInfo: false
""", ca=b64e(cert_pem()), h=hx(32).upper(), acct=num(12)))
    add(cls, "none", "yaml", "home/amelia/.kube/config", fill("""
apiVersion: v1
kind: Config
clusters:
- name: gke_@@p@@_europe-west1_main
  cluster:
    certificate-authority-data: @@ca@@
    server: https://34.@@o1@@.@@o2@@.@@o3@@
contexts:
- name: gke_@@p@@_europe-west1_main
  context:
    cluster: gke_@@p@@_europe-west1_main
    user: gke_@@p@@_europe-west1_main
current-context: gke_@@p@@_europe-west1_main
users:
- name: gke_@@p@@_europe-west1_main
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: gke-gcloud-auth-plugin
      installHint: Install gke-gcloud-auth-plugin for use with kubectl by following
        https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin
      provideClusterInfo: true
""", p=app() + "-prod-" + num(6), ca=b64e(cert_pem()), o1=R.randint(1, 250), o2=R.randint(1, 250), o3=R.randint(1, 250)))


def aws_credentials():
    cls = "aws-credentials"
    add(cls, "secret", "ini", "home/dvolkov/.aws/credentials", fill("""
[default]
aws_access_key_id = @@a1@@
aws_secret_access_key = @@s1@@

[billing-prod]
aws_access_key_id = @@a2@@
aws_secret_access_key = @@s2@@
region = us-east-1
""", a1=aws_id(), s1=aws_secret(), a2=aws_id(), s2=aws_secret()))
    add(cls, "secret", "ini", "ops/aws/credentials", fill("""
# temporary creds from `aws sts assume-role`, expire in 12h
[ci-deployer]
aws_access_key_id = ASIA@@aid@@
aws_secret_access_key = @@sk@@
aws_session_token = IQoJb3JpZ2luX2VjE@@st@@
""", aid=rs(16, UP + "234567"), sk=aws_secret(), st=rs(380, B64)))
    add(cls, "none", "ini", "home/dvolkov/.aws/config", fill("""
[default]
region = eu-central-1
output = json

[sso-session acme]
sso_start_url = https://acme-@@x@@.awsapps.com/start
sso_region = eu-central-1
sso_registration_scopes = sso:account:access

[profile prod-admin]
sso_session = acme
sso_account_id = @@acct1@@
sso_role_name = AdministratorAccess
region = eu-central-1

[profile staging]
role_arn = arn:aws:iam::@@acct2@@:role/OrganizationAccountAccessRole
source_profile = default
mfa_serial = arn:aws:iam::@@acct1@@:mfa/dvolkov

[profile legacy]
credential_process = /opt/homebrew/bin/aws-vault export --format=json legacy
""", x=rs(6, LO + DI), acct1=num(12), acct2=num(12)))
    add(cls, "none", "ini", "home/ci/.aws/credentials", """
# Managed by aws-vault; long-lived keys live in the OS keychain.
[default]
credential_process = aws-vault export --format=json default

[deploy]
credential_process = /usr/local/bin/aws-sso-creds --profile deploy
"""[1:])


def s3cfg():
    cls = "s3cfg"
    add(cls, "secret", "s3cfg", "home/backup/.s3cfg", fill("""
[default]
access_key = @@ak@@
secret_key = @@sk@@
bucket_location = EU
host_base = s3.amazonaws.com
host_bucket = %(bucket)s.s3.amazonaws.com
gpg_command = /usr/bin/gpg
gpg_passphrase = @@gp@@
encrypt = True
use_https = True
signature_v2 = False
""", ak=aws_id(), sk=aws_secret(), gp=passphrase()))
    add(cls, "secret", "s3cfg", "ops/.s3cfg-spaces", fill("""
[default]
access_key = DO@@ak@@
secret_key = @@sk@@
host_base = fra1.digitaloceanspaces.com
host_bucket = %(bucket)s.fra1.digitaloceanspaces.com
check_ssl_certificate = True
use_https = True
""", ak=rs(18, UP + DI), sk=rs(43, B64)))
    add(cls, "none", "s3cfg", "home/backup/.s3cfg", """
[default]
# Credentials come from the EC2 instance profile (IAM role backup-writer)
access_key =
secret_key =
access_token =
bucket_location = EU
host_base = s3.amazonaws.com
host_bucket = %(bucket)s.s3.amazonaws.com
gpg_command = /usr/bin/gpg
gpg_passphrase =
encrypt = False
use_https = True
multipart_chunk_size_mb = 64
"""[1:])


def pgpass():
    cls = "pgpass"
    add(cls, "secret", "pgpass", "home/deploy/.pgpass", fill("""
# hostname:port:database:username:password
localhost:5432:*:postgres:@@p1@@
@@a@@-prod.cluster-@@h@@.us-east-1.rds.amazonaws.com:5432:@@a@@_production:@@a@@:@@p2@@
replica.internal:5432:*:readonly:@@p3@@
""", p1=pw_alnum(), a=app(), h=rs(12, LO + DI), p2=pw_alnum(), p3=pw_alnum()))
    add(cls, "secret", "pgpass", "ops/backup/pgpass", fill("""
db-primary.@@d@@:5432:*:backup:@@p@@
""", d=dom(), p=pw().replace(":", "")))
    add(cls, "none", "conf", "home/deploy/.pg_service.conf", fill("""
# Connection service file; passwords are NOT stored here.
# Use ~/.pgpass (0600, provisioned by Ansible) or IAM auth tokens.
[prod]
host=@@a@@-prod.cluster-@@h@@.us-east-1.rds.amazonaws.com
port=5432
dbname=@@a@@_production
user=@@a@@_readonly
sslmode=verify-full
sslrootcert=/etc/ssl/certs/rds-global-bundle.pem

[local]
host=localhost
dbname=@@a@@_development
user=postgres
""", a=app(), h=rs(12, LO + DI)))


def my_cnf():
    cls = "my-cnf"
    add(cls, "secret", "cnf", "home/dba/.my.cnf", fill("""
[client]
user=root
password="@@p@@"
host=127.0.0.1
default-character-set=utf8mb4

[mysqldump]
user=backup
password=@@p2@@
single-transaction
quick
""", p=pw(), p2=pw_alnum()))
    add(cls, "secret", "cnf", "docker/mysql/conf.d/replication.cnf", fill("""
[mysqld]
server-id = 2
relay-log = /var/lib/mysql/relay-bin
read_only = ON

[client]
# used by the healthcheck and orchestrator
user = orchestrator
password = @@p@@
""", p=pw_alnum()))
    add(cls, "none", "cnf", "home/dba/.my.cnf", """
[client]
user=dba
socket=/var/run/mysqld/mysqld.sock
# Password is stored obfuscated in ~/.mylogin.cnf via:
#   mysql_config_editor set --login-path=client --user=dba --password
default-character-set=utf8mb4

[mysql]
prompt="\\\\u@\\\\h [\\\\d]> "
auto-rehash
"""[1:])


def git_credentials():
    cls = "git-credentials"
    add(cls, "secret", "", "home/ci/.git-credentials", fill("""
https://@@u@@:@@gh@@@github.com
https://oauth2:@@gl@@@gitlab.@@d@@
""", u=user(), gh=ghp(), gl=glpat(), d=dom()))
    add(cls, "secret", "gitconfig", "home/jmorales/.gitconfig", fill("""
[user]
	name = Javier Morales
	email = jmorales@@@d@@
[url "https://@@u@@:@@tok@@@github.com/acme/"]
	insteadOf = https://github.com/acme/
[pull]
	rebase = true
[init]
	defaultBranch = main
""", d=dom(), u="jmorales", tok=gh_fine()))
    add(cls, "none", "gitconfig", "dotfiles/.gitconfig", fill("""
[user]
	name = Li Chen
	email = lchen@@@d@@
	signingkey = @@kid@@
[commit]
	gpgsign = true
[credential]
	helper = osxkeychain
[credential "https://dev.azure.com"]
	useHttpPath = true
[url "git@github.com:"]
	insteadOf = https://github.com/
[alias]
	lg = log --graph --oneline --decorate
	co = checkout
[core]
	excludesfile = ~/.gitignore_global
	pager = delta
""", d=dom(), kid=hx(16).upper()))
    add(cls, "none", "gitconfig", "home/ci/.gitconfig", fill("""
[user]
	name = acme-ci
	email = ci@@@d@@
	signingkey = ~/.ssh/ci_signing_ed25519.pub
[gpg]
	format = ssh
[gpg "ssh"]
	allowedSignersFile = ~/.config/git/allowed_signers
[credential]
	helper = "!f() { echo username=x-access-token; echo password=$GITHUB_TOKEN; }; f"
[safe]
	directory = /builds/*
""", d=dom()))


def ssh_keys():
    cls = "ssh-keys"
    priv, pub = ed25519_pair("deploy@" + app())
    add(cls, "secret", "", "deploy/keys/id_ed25519", priv)
    add(cls, "secret", "pem", "ansible/files/deploy_rsa.pem", rsa_pem())
    priv2, pub2 = ed25519_pair("lchen@mbp")
    add(cls, "none", "pub", "home/lchen/.ssh/id_ed25519.pub", pub2 + "\n")
    add(cls, "none", "", "ansible/roles/users/files/authorized_keys", "\n".join([
        "# managed by ansible - do not edit",
        pub,
        ssh_rsa_pub("kpatel@laptop"),
        'command="/usr/local/bin/backup-only",no-port-forwarding,no-pty ' + ed25519_pair("backup@nas")[1],
    ]) + "\n")
    add(cls, "none", "", "home/ops/.ssh/config", """
Host bastion
  HostName bastion.prod.internal
  User ops
  IdentityFile ~/.ssh/id_ed25519
  IdentitiesOnly yes

Host 10.20.*
  ProxyJump bastion
  User deploy
  IdentityFile ~/.ssh/deploy_ed25519
  StrictHostKeyChecking yes
  UserKnownHostsFile ~/.ssh/known_hosts.prod

Host github.com
  IdentityAgent "~/Library/Group Containers/2BUA8C4S2C.com.1password/t/agent.sock"
"""[1:])


def netrc():
    cls = "netrc"
    add(cls, "secret", "netrc", "home/deploy/.netrc", fill("""
machine api.heroku.com
  login ops@@@d@@
  password @@h1@@
machine git.heroku.com
  login ops@@@d@@
  password @@h1@@
""", d=dom(), h1=uuid()))
    add(cls, "secret", "netrc", "ci/.netrc", fill("""
machine github.com login x-access-token password @@gh@@
machine maven.pkg.github.com login @@u@@ password @@gh@@
""", gh=ghp(), u=user()))


# ---------------------------------------------------------------- Kubernetes / Helm / Ansible / build

def k8s_secret():
    cls = "k8s-secret-manifest"
    a = app()
    add(cls, "secret", "yaml", "k8s/base/secret.yaml", fill("""
apiVersion: v1
kind: Secret
metadata:
  name: @@a@@-env
  namespace: @@a@@
  labels:
    app.kubernetes.io/name: @@a@@
type: Opaque
data:
  DATABASE_URL: @@db@@
  SECRET_KEY_BASE: @@skb@@
  RAILS_MASTER_KEY: @@mk@@
""", a=a, db=b64e("postgres://%s:%s@%s-postgresql:5432/%s_production" % (a, pw_alnum(), a, a)), skb=b64e(hx(128)), mk=b64e(hx(32))))
    a = app()
    add(cls, "secret", "yaml", "deploy/k8s/stripe-secret.yaml", fill("""
---
apiVersion: v1
kind: Secret
metadata:
  name: stripe
  namespace: payments
  annotations:
    kubernetes.io/description: "Stripe keys for the @@a@@ checkout service"
type: Opaque
stringData:
  STRIPE_SECRET_KEY: "@@sk@@"
  STRIPE_WEBHOOK_SECRET: "@@wh@@"
  STRIPE_PUBLISHABLE_KEY: "@@pk@@"
""", a=a, sk=stripe_sk(), wh=stripe_whsec(), pk=stripe_pk()))
    add(cls, "secret", "yaml", "k8s/registry-pull-secret.yaml", fill("""
apiVersion: v1
kind: Secret
metadata:
  name: ghcr-pull
  namespace: @@a@@
type: kubernetes.io/dockerconfigjson
data:
  .dockerconfigjson: @@dcj@@
""", a=app(), dcj=b64e('{"auths":{"ghcr.io":{"username":"%s","password":"%s","auth":"%s"}}}' % ("acme-bot", (t := ghp()), b64e("acme-bot:" + t)))))
    a = app()
    add(cls, "none", "yaml", "k8s/overlays/prod/sealed-secret.yaml", fill("""
apiVersion: bitnami.com/v1alpha1
kind: SealedSecret
metadata:
  creationTimestamp: null
  name: @@a@@-env
  namespace: @@a@@
spec:
  encryptedData:
    DATABASE_URL: @@e1@@
    SECRET_KEY_BASE: @@e2@@
  template:
    metadata:
      creationTimestamp: null
      name: @@a@@-env
      namespace: @@a@@
    type: Opaque
""", a=a, e1="Ag" + b64e(rbytes(R.randint(420, 520))), e2="Ag" + b64e(rbytes(R.randint(420, 520)))))
    a = app()
    add(cls, "none", "yaml", "k8s/base/external-secret.yaml", fill("""
apiVersion: external-secrets.io/v1beta1
kind: ExternalSecret
metadata:
  name: @@a@@-env
  namespace: @@a@@
spec:
  refreshInterval: 1h
  secretStoreRef:
    kind: ClusterSecretStore
    name: aws-secrets-manager
  target:
    name: @@a@@-env
    creationPolicy: Owner
  data:
    - secretKey: DATABASE_PASSWORD
      remoteRef:
        key: prod/@@a@@/database
        property: password
    - secretKey: SECRET_KEY_BASE
      remoteRef:
        key: prod/@@a@@/rails
        property: secret_key_base
    - secretKey: STRIPE_SECRET_KEY
      remoteRef:
        key: prod/@@a@@/stripe
        property: secret_key
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: @@a@@
  namespace: @@a@@
  annotations:
    eks.amazonaws.com/role-arn: arn:aws:iam::@@acct@@:role/@@a@@-irsa
""", a=a, acct=num(12)))
    add(cls, "none", "yaml", "k8s/base/tls-secret.yaml", fill("""
# Public certificate only; the private key is issued by cert-manager into
# the same Secret at runtime (see certificate.yaml). This manifest seeds
# the CA bundle for the ingress mTLS check.
apiVersion: v1
kind: Secret
metadata:
  name: client-ca
  namespace: ingress-nginx
type: Opaque
data:
  ca.crt: @@ca@@
""", ca=b64e(cert_pem())))


def k8s_configmap():
    cls = "k8s-configmap"
    a = app()
    nginx = """server {
    listen 8080;
    server_name _;
    root /app/public;
    location /cable { proxy_pass http://127.0.0.1:3000; proxy_http_version 1.1; proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection "upgrade"; }
    location / { try_files $uri @app; }
    location @app { proxy_pass http://127.0.0.1:3000; proxy_set_header X-Forwarded-Proto $scheme; }
}
"""
    add(cls, "none", "yaml", "k8s/base/configmap-nginx.yaml", fill("""
apiVersion: v1
kind: ConfigMap
metadata:
  name: @@a@@-nginx
  namespace: @@a@@
binaryData:
  default.conf: @@b@@
data:
  RAILS_ENV: production
  RAILS_LOG_TO_STDOUT: "1"
  WEB_CONCURRENCY: "3"
""", a=a, b=b64e(nginx)))
    a = app()
    js = json.dumps({"featureFlags": {"newCheckout": True, "flagId": uuid()}, "apiBase": "https://api.%s" % dom(), "buildId": hx(12)}, indent=None)
    add(cls, "none", "yaml", "k8s/base/configmap-frontend.yaml", fill("""
apiVersion: v1
kind: ConfigMap
metadata:
  name: @@a@@-frontend-config
  namespace: @@a@@
  annotations:
    config.kubernetes.io/checksum: sha256:@@cs@@
data:
  # base64 so the JSON survives the envsubst step in the deploy job
  APP_CONFIG_B64: @@b@@
  PUBLIC_STRIPE_KEY: "@@pk@@"
  SECRET_NAME: @@a@@-env
  PASSWORD_MIN_LENGTH: "12"
  TOKEN_URL: https://auth.@@d@@/oauth/token
""", a=a, cs=sha256(), b=b64e(js), pk=stripe_pk(), d=dom()))
    a = app()
    add(cls, "none", "yaml", "k8s/base/configmap-env.yaml", fill("""
apiVersion: v1
kind: ConfigMap
metadata:
  name: @@a@@-env
data:
  DATABASE_HOST: @@a@@-postgresql.@@a@@.svc.cluster.local
  DATABASE_USER: @@a@@
  DATABASE_PASSWORD_SECRET: @@a@@-postgresql
  DATABASE_PASSWORD_KEY: password
  REDIS_URL: redis://@@a@@-redis-master:6379/0
  OTEL_EXPORTER_OTLP_ENDPOINT: http://otel-collector.observability:4318
  SIDEKIQ_CONCURRENCY: "10"
""", a=a))
    a = app()
    add(cls, "secret", "yaml", "k8s/base/configmap-env.yaml", fill("""
apiVersion: v1
kind: ConfigMap
metadata:
  name: @@a@@-config
  namespace: @@a@@
data:
  RAILS_ENV: production
  DATABASE_URL: postgres://@@a@@:@@p@@@@@a@@-postgresql:5432/@@a@@_production
  REDIS_URL: redis://@@a@@-redis-master:6379/0
  ELASTICSEARCH_URL: https://elastic:@@ep@@@es.@@d@@:9243
""", a=a, p=pw_alnum(), ep=rs(24), d=dom()))


def helm_values():
    cls = "helm-values"
    a = app()
    add(cls, "secret", "yaml", "charts/@@a@@/values-prod.yaml".replace("@@a@@", a), fill("""
replicaCount: 3

image:
  repository: ghcr.io/acme/@@a@@
  tag: "2024.09.3"
  pullPolicy: IfNotPresent

env:
  RAILS_ENV: production
  RAILS_SERVE_STATIC_FILES: "true"

postgresql:
  enabled: true
  auth:
    username: @@a@@
    password: "@@p@@"
    postgresPassword: "@@pp@@"
    database: @@a@@_production

redis:
  enabled: true
  auth:
    enabled: true
    password: @@rp@@

ingress:
  enabled: true
  className: nginx
  hosts:
    - host: @@a@@.@@d@@
      paths: [{ path: /, pathType: Prefix }]
""", a=a, p=pw_alnum(), pp=pw_alnum(), rp=rs(32), d=dom()))
    add(cls, "secret", "yaml", "helm/grafana/values.yaml", fill("""
adminUser: admin
adminPassword: @@p@@

grafana.ini:
  server:
    root_url: https://grafana.@@d@@
  auth.github:
    enabled: true
    allow_sign_up: true
    client_id: Iv1.@@cid@@
    client_secret: @@cs@@
    scopes: user:email,read:org
    allowed_organizations: acme

persistence:
  enabled: true
  size: 10Gi
""", p=pw(), d=dom(), cid=hx(16), cs=hx(40)))
    a = app()
    add(cls, "none", "yaml", "charts/@@a@@/values.yaml".replace("@@a@@", a), fill("""
# Default values for @@a@@.
replicaCount: 1

image:
  repository: ghcr.io/acme/@@a@@
  digest: sha256:@@dg@@

existingSecret: @@a@@-env        # name of a Secret with SECRET_KEY_BASE etc.
secretKeyBaseKey: SECRET_KEY_BASE

postgresql:
  enabled: true
  auth:
    username: @@a@@
    database: @@a@@_production
    # Use an existing secret for the passwords (keys: password, postgres-password)
    existingSecret: @@a@@-postgresql
    secretKeys:
      userPasswordKey: password
      adminPasswordKey: postgres-password

redis:
  auth:
    enabled: true
    existingSecret: @@a@@-redis
    existingSecretPasswordKey: redis-password

serviceAccount:
  create: true
  annotations: {}
  name: ""
""", a=a, dg=sha256()))
    add(cls, "none", "yaml", "helm/grafana/values.yaml", fill("""
admin:
  existingSecret: grafana-admin
  userKey: admin-user
  passwordKey: admin-password

grafana.ini:
  server:
    root_url: https://grafana.@@d@@
  auth.generic_oauth:
    enabled: true
    name: Okta
    client_id: $__env{OKTA_CLIENT_ID}
    client_secret: $__file{/etc/secrets/okta/client_secret}
    scopes: openid profile email groups
    auth_url: https://acme.okta.com/oauth2/v1/authorize
    token_url: https://acme.okta.com/oauth2/v1/token
    api_url: https://acme.okta.com/oauth2/v1/userinfo

envFromSecret: grafana-env
extraSecretMounts:
  - name: okta
    secretName: grafana-okta
    mountPath: /etc/secrets/okta
    readOnly: true
""", d=dom()))
    add(cls, "none", "yaml", "charts/app/values.schema-example.yaml", """
# Example overrides for local kind clusters. Passwords here are deliberately
# non-functional placeholders; real values come from `helm secrets`.
postgresql:
  auth:
    username: app
    password: "changeme"
    postgresPassword: "changeme"
secrets:
  SECRET_KEY_BASE: "<generate with: bin/rails secret>"
  STRIPE_SECRET_KEY: "sk_test_REPLACE_ME"
  SENTRY_DSN: ""
"""[1:])


def ansible_vars():
    cls = "ansible-vars-plain"
    a = app()
    add(cls, "secret", "yml", "ansible/group_vars/production.yml", fill("""
---
app_name: @@a@@
app_user: deploy
app_root: /srv/@@a@@
ruby_version: 3.3.5

postgresql_version: 16
postgresql_databases:
  - name: @@a@@_production
postgresql_users:
  - name: @@a@@
    password: "@@p@@"
    role_attr_flags: LOGIN

app_env:
  RAILS_ENV: production
  SECRET_KEY_BASE: "@@skb@@"
  DATABASE_URL: "postgres://@@a@@@localhost/@@a@@_production"

nginx_server_name: @@a@@.@@d@@
letsencrypt_email: ops@@@d@@
""", a=a, p=pw(), skb=hx(128), d=dom()))
    add(cls, "secret", "yml", "ansible/roles/monitoring/defaults/main.yml", fill("""
---
node_exporter_version: 1.8.2
node_exporter_checksum: "sha256:@@cs@@"
datadog_api_key: "@@dd@@"
datadog_site: datadoghq.eu
pagerduty_integration_key: "@@pd@@"
alertmanager_slack_url: "@@hook@@"
""", cs=sha256(), dd=hx(32), pd=hx(32), hook=slack_hook()))
    add(cls, "none", "yml", "ansible/group_vars/production/vars.yml", fill("""
---
# Plain vars reference vault_* variables defined in vault.yml (ansible-vault encrypted).
app_name: @@a@@
postgresql_users:
  - name: @@a@@
    password: "{{ vault_postgresql_app_password }}"
app_env:
  RAILS_ENV: production
  SECRET_KEY_BASE: "{{ vault_secret_key_base }}"
  RAILS_MASTER_KEY: "{{ lookup('community.hashi_vault.hashi_vault', 'secret=kv/data/@@a@@:master_key') }}"
  STRIPE_SECRET_KEY: "{{ lookup('amazon.aws.aws_secret', 'prod/@@a@@/stripe') }}"
deploy_user_password_hash: "@@sha512@@"
node_exporter_checksum: "sha256:@@cs@@"
""", a=a, sha512="$6$" + rs(16, "./" + AN) + "$" + rs(86, "./" + AN), cs=sha256()))
    add(cls, "none", "yml", "ansible/roles/app/tasks/main.yml", """
---
- name: Render environment file
  ansible.builtin.template:
    src: env.j2
    dest: "/etc/{{ app_name }}/env"
    owner: root
    group: "{{ app_user }}"
    mode: "0640"
  no_log: true
  notify: restart puma

- name: Write master key
  ansible.builtin.copy:
    content: "{{ vault_rails_master_key }}"
    dest: "{{ app_root }}/shared/config/master.key"
    mode: "0600"
    owner: "{{ app_user }}"
  no_log: true

- name: Create database user
  community.postgresql.postgresql_user:
    name: "{{ app_name }}"
    password: "{{ vault_postgresql_app_password }}"
    login_password: "{{ lookup('ansible.builtin.env', 'PGPASSWORD') }}"
  become: true
  become_user: postgres
"""[1:])


def ansible_vault():
    cls = "ansible-vault-encrypted"
    add(cls, "none", "yml", "ansible/group_vars/production/vault.yml", vault_blob(R.randint(20, 34)) + "\n")
    a = app()
    add(cls, "none", "yml", "ansible/host_vars/db1.yml", fill("""
---
postgresql_listen_addresses: "10.20.0.15"
postgresql_replication_user: replicator
postgresql_replication_password: !vault |
          @@v1@@
pgbackrest_repo1_s3_key: !vault |
          @@v2@@
pgbackrest_repo1_s3_bucket: @@a@@-pgbackrest
""", v1=vault_blob(5).replace("\n", "\n          "), v2=vault_blob(5).replace("\n", "\n          "), a=a))
    add(cls, "none", "yml", "ansible/inventories/prod/group_vars/all/vault.yml", "$ANSIBLE_VAULT;1.2;AES256;prod\n" + vault_blob(R.randint(12, 20)).split("\n", 1)[1] + "\n")


def ansible_inventory():
    cls = "ansible-inventory"
    add(cls, "secret", "ini", "ansible/inventory/production.ini", fill("""
[web]
web1.@@d@@ ansible_host=10.20.1.11
web2.@@d@@ ansible_host=10.20.1.12

[db]
db1.@@d@@ ansible_host=10.20.0.15

[all:vars]
ansible_user=deploy
ansible_ssh_pass=@@p@@
ansible_become_pass=@@bp@@
ansible_python_interpreter=/usr/bin/python3
""", d=dom(), p=pw(), bp=pw()))
    add(cls, "secret", "yml", "ansible/inventory/hosts.yml", fill("""
all:
  children:
    windows:
      hosts:
        win-build-01:
          ansible_host: 10.30.4.21
      vars:
        ansible_connection: winrm
        ansible_user: Administrator
        ansible_password: "@@p@@"
        ansible_winrm_transport: ntlm
        ansible_winrm_server_cert_validation: ignore
    linux:
      hosts:
        runner-[01:04].@@d@@:
      vars:
        ansible_user: ubuntu
""", p=pw(), d=dom()))
    add(cls, "none", "ini", "ansible/inventory/staging.ini", fill("""
[web]
stg-web1.@@d@@ ansible_host=10.40.1.11
stg-web2.@@d@@ ansible_host=10.40.1.12

[worker]
stg-worker1.@@d@@ ansible_host=10.40.2.11

[all:vars]
ansible_user=deploy
ansible_ssh_private_key_file=~/.ssh/acme_staging_ed25519
ansible_become_password_file=/run/user/1000/become_pass
ansible_ssh_common_args='-o ProxyJump=ops@bastion.stg.@@d@@'
vault_password_file=~/.ansible/vault_pass_staging.sh
""", d=dom()))


def makefile():
    cls = "makefile"
    add(cls, "secret", "mk", "Makefile", fill("""
APP      := @@a@@
REGISTRY := registry.@@d@@
TAG      ?= $(shell git rev-parse --short HEAD)
REGISTRY_USER := ci-pusher
REGISTRY_PASS := @@p@@

.PHONY: build push deploy test

build:
	docker build -t $(REGISTRY)/$(APP):$(TAG) .

login:
	@echo "$(REGISTRY_PASS)" | docker login $(REGISTRY) -u $(REGISTRY_USER) --password-stdin

push: login build
	docker push $(REGISTRY)/$(APP):$(TAG)

deploy: push
	kubectl -n $(APP) set image deploy/$(APP) web=$(REGISTRY)/$(APP):$(TAG)

test:
	bundle exec rspec
""", a=app(), d=dom(), p=pw_alnum()))
    add(cls, "secret", "mk", "Makefile", fill("""
MIX_ENV ?= prod
HEX_ORG := acme

deps:
	mix hex.organization auth $(HEX_ORG) --key @@hk@@
	mix deps.get --only $(MIX_ENV)

release: deps
	MIX_ENV=$(MIX_ENV) mix assets.deploy
	MIX_ENV=$(MIX_ENV) mix release --overwrite

publish-docs:
	curl -fsS -X POST https://docs.@@d@@/api/upload \\
	  -H "Authorization: Token @@tok@@" \\
	  -F "file=@doc.tar.gz"
""", hk=hx(32), d=dom(), tok=rs(40)))
    add(cls, "none", "mk", "Makefile", fill("""
APP := @@a@@
REGISTRY := ghcr.io/acme
TAG ?= $(shell git rev-parse --short HEAD)
GOLANGCI_SHA256 := @@s@@

.PHONY: login build push secrets

login:
	@echo "$$GHCR_TOKEN" | docker login ghcr.io -u "$$GITHUB_ACTOR" --password-stdin

build:
	docker build --secret id=master_key,src=config/master.key -t $(REGISTRY)/$(APP):$(TAG) .

push: login build
	docker push $(REGISTRY)/$(APP):$(TAG)

secrets:
	@sops -d deploy/secrets.enc.yaml | kubectl apply -f -

credentials:
	EDITOR="code --wait" bin/rails credentials:edit --environment $(ENV)
""", a=app(), s=sha256()))
    add(cls, "none", "mk", "Makefile", """
PHP := php
COMPOSER := composer
SYMFONY := $(PHP) bin/console

.PHONY: install jwt db test

install:
	$(COMPOSER) install --no-interaction --prefer-dist

jwt:
	@mkdir -p config/jwt
	@openssl genpkey -out config/jwt/private.pem -aes256 -pass env:JWT_PASSPHRASE -algorithm rsa -pkeyopt rsa_keygen_bits:4096
	@openssl pkey -in config/jwt/private.pem -out config/jwt/public.pem -pubout -passin env:JWT_PASSPHRASE

db:
	$(SYMFONY) doctrine:database:create --if-not-exists
	$(SYMFONY) doctrine:migrations:migrate -n

secrets-set:
	$(SYMFONY) secrets:set STRIPE_SECRET_KEY --env=prod

test:
	APP_ENV=test $(PHP) bin/phpunit
"""[1:])


def procfile():
    cls = "procfile"
    add(cls, "secret", "", "Procfile", fill("""
web: RAILS_MASTER_KEY=@@k@@ bundle exec puma -C config/puma.rb
worker: RAILS_MASTER_KEY=@@k@@ bundle exec sidekiq -C config/sidekiq.yml
release: bin/rails db:migrate
""", k=hx(32)))
    add(cls, "none", "", "Procfile", """
web: bundle exec puma -C config/puma.rb
worker: bundle exec sidekiq -C config/sidekiq.yml
release: bundle exec rails db:migrate && bundle exec rails credentials:show >/dev/null
"""[1:])
    add(cls, "none", "dev", "Procfile.dev", """
web: env RUBY_DEBUG_OPEN=true bin/rails server -p 3000
css: bin/rails tailwindcss:watch
js: yarn build --watch
stripe: stripe listen --forward-to localhost:3000/webhooks/stripe --api-key $STRIPE_SECRET_KEY
mail: mailcatcher --foreground --http-ip 0.0.0.0
"""[1:])


def crontab():
    cls = "crontab"
    add(cls, "secret", "", "ops/crontab", fill("""
SHELL=/bin/bash
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
MAILTO=ops@@@d@@

# m h  dom mon dow   command
15 2 * * * PGPASSWORD='@@p@@' pg_dump -h db1.internal -U backup @@a@@_production | gzip > /var/backups/@@a@@-$(date +\\%F).sql.gz
45 2 * * * aws s3 sync /var/backups s3://@@a@@-backups/db/ --storage-class STANDARD_IA
*/5 * * * * curl -fsS -m 10 --retry 3 https://hc-ping.com/@@hc@@ > /dev/null
""", d=dom(), p=pw_alnum(), a=app(), hc=uuid()))
    add(cls, "secret", "", "deploy/cron/app.cron", fill("""
# /etc/cron.d/@@a@@ -- installed by capistrano
MAILTO=""
0 * * * * deploy cd /srv/@@a@@/current && RAILS_ENV=production bin/rails runner 'Reports::Hourly.run' >> log/cron.log 2>&1
30 3 * * * deploy /usr/bin/mysqldump -uroot -p@@p@@ --single-transaction @@a@@ | gzip > /srv/backups/@@a@@.sql.gz
0 6 * * 1 deploy curl -s -X POST -H "Authorization: Bearer @@tok@@" https://api.@@d@@/internal/weekly-digest
""", a=app(), p=pw_alnum(), tok=rs(48, URL), d=dom()))
    add(cls, "none", "", "ops/crontab", fill("""
SHELL=/bin/bash
MAILTO=ops@@@d@@

# Credentials come from ~/.pgpass (0600) and /etc/@@a@@/backup.env, not from this file.
15 2 * * * . /etc/@@a@@/backup.env && pg_dump -h db1.internal -U backup @@a@@_production | gzip > /var/backups/@@a@@-$(date +\\%F).sql.gz
30 3 * * * mysqldump --defaults-extra-file=/root/.my.backup.cnf --single-transaction @@a@@ | gzip > /srv/backups/@@a@@.sql.gz
0 4 * * * certbot renew --quiet --deploy-hook "systemctl reload nginx"
0 5 * * 0 find /var/backups -mtime +14 -delete
""", d=dom(), a=app()))
    add(cls, "none", "yml", "config/schedule.yml", """
# sidekiq-cron schedule
refresh_exchange_rates:
  cron: "0 */6 * * *"
  class: "ExchangeRates::RefreshJob"
  queue: low
rotate_api_tokens:
  cron: "0 3 * * *"
  class: "ApiTokens::RotateExpiredJob"
  description: "Revokes API tokens older than 90 days (token_ttl_days in settings)"
purge_password_reset_tokens:
  cron: "*/30 * * * *"
  class: "Users::PurgeResetTokensJob"
"""[1:])


def sops_encrypted():
    cls = "sops-encrypted"
    def enc(n):
        return "ENC[AES256_GCM,data:%s,iv:%s,tag:%s,type:str]" % (b64e(rbytes(n)), b64e(rbytes(32)), b64e(rbytes(16)))
    a = app()
    add(cls, "none", "yaml", "deploy/secrets.enc.yaml", fill("""
apiVersion: v1
kind: Secret
metadata:
    name: @@a@@-env
    namespace: @@a@@
type: Opaque
stringData:
    DATABASE_PASSWORD: @@e1@@
    SECRET_KEY_BASE: @@e2@@
    STRIPE_SECRET_KEY: @@e3@@
sops:
    kms:
        - arn: arn:aws:kms:eu-west-1:@@acct@@:key/@@kid@@
          created_at: "2024-08-14T09:12:44Z"
          enc: AQICAHh@@kenc@@
          aws_profile: ""
    age: []
    lastmodified: "2024-08-14T09:12:45Z"
    mac: @@mac@@
    pgp: []
    encrypted_regex: ^(data|stringData)$
    version: 3.9.0
""", a=a, e1=enc(24), e2=enc(128), e3=enc(107), acct=num(12), kid=uuid(), kenc=rs(180, B64), mac=enc(32).replace("type:str", "type:str")))
    add(cls, "none", "yaml", "helm/secrets/prod/values.secrets.yaml", fill("""
postgresql:
    auth:
        password: @@e1@@
        postgresPassword: @@e2@@
smtp:
    password: @@e3@@
sops:
    age:
        - recipient: age1@@age@@
          enc: |
            -----BEGIN AGE ENCRYPTED FILE-----
            @@ab1@@
            @@ab2@@
            -----END AGE ENCRYPTED FILE-----
    lastmodified: "2024-10-02T14:03:11Z"
    mac: @@mac@@
    unencrypted_suffix: _unencrypted
    version: 3.8.1
""", e1=enc(20), e2=enc(22), e3=enc(40), age=rs(58, "qpzry9x8gf2tvdw0s3jn54khce6mua7l"), ab1=b64e(rbytes(48)), ab2=b64e(rbytes(48)), mac=enc(32)))


def main():
    for fn in [rails_database_yml, rails_secrets_yml, rails_master_key, rails_credentials_enc,
               rails_credentials_plain, rails_initializer_service, rails_credentials_fetch,
               gemfile_source_auth, bundle_config, vcr_cassette, vcr_config, rails_seeds,
               rails_storage_yml, rails_smtp_settings, devise_omniauth, sidekiq_redis,
               dotenv_rails, heroku_app_json,
               laravel_dotenv, laravel_config_php, laravel_seeder_factory, symfony_dotenv,
               symfony_parameters_yml, symfony_config_yaml, wp_config, wp_plugin_constants,
               composer_auth, composer_lock, php_api_client, php_pdo_connection,
               phoenix_config_exs, phoenix_runtime_exs, elixir_module_attr, phoenix_auth_config,
               phoenix_seeds,
               shell_rc, shell_curl, install_checksums, npmrc, pypirc, gem_credentials,
               docker_config, kubeconfig, aws_credentials, s3cfg, pgpass, my_cnf,
               git_credentials, ssh_keys, netrc,
               k8s_secret, k8s_configmap, helm_values, ansible_vars, ansible_vault,
               ansible_inventory, makefile, procfile, crontab, sops_encrypted]:
        fn()
    with open(OUT, "w", encoding="utf-8") as fh:
        for c in CASES:
            fh.write(json.dumps(c, ensure_ascii=False) + "\n")
    n_sec = sum(1 for c in CASES if c["label"] == "secret")
    print("wrote %d cases (%d secret, %d none, %d classes) to %s" % (
        len(CASES), n_sec, len(CASES) - n_sec, len({c["class"] for c in CASES}), OUT))


if __name__ == "__main__":
    main()
