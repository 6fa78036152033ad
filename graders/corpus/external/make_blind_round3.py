#!/usr/bin/env python3
"""Blind held-out corpus, round 3 (generator-6).

Written by an evaluator who did not read the scanner's sources, tests or
benchmarks: whole realistic application and configuration files across many
ecosystems (Spring, .NET, Go, Rust, Laravel, Rails, iOS, Android, Elixir,
Scala, Terraform/Pulumi, Ansible, Docker, CI, nginx, SQL, Make, shell).
About 40% of the cases hold exactly one live-shaped secret; the rest are hard
negatives (hashes, ids, public keys, encrypted blobs, placeholders, env-var
indirection, secret-manager lookups, publishable keys, RFC test vectors...).

Stdlib only, fixed seed, deterministic: `python3 make_blind_round3.py`
rewrites generator6.jsonl beside this file.
"""

import base64
import binascii
import json
import os
import random
import string
import struct
import uuid
import zlib

SEED = 61203
R = random.Random(SEED)
USED = set()
CASES = []

ALNUM = string.ascii_letters + string.digits
B62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
B64URL = ALNUM + "-_"
UPPER_NUM = string.ascii_uppercase + string.digits


def uniq(fn):
    for _ in range(1000):
        v = fn()
        if v not in USED:
            USED.add(v)
            return v
    raise RuntimeError("no unique value")


def chars(alphabet, n):
    return uniq(lambda: "".join(R.choice(alphabet) for _ in range(n)))


def alnum(n):
    return chars(ALNUM, n)


def hexs(n):
    return chars("0123456789abcdef", n)


def rbytes(n):
    return bytes(R.getrandbits(8) for _ in range(n))


def b64(n, pad=True):
    def f():
        s = base64.b64encode(rbytes(n)).decode()
        return s if pad else s.rstrip("=")

    return uniq(f)


def b64url(n):
    return uniq(lambda: base64.urlsafe_b64encode(rbytes(n)).decode().rstrip("="))


def uid():
    return uniq(lambda: str(uuid.UUID(int=R.getrandbits(128), version=4)))


def password(n=None):
    n = n or R.randint(14, 24)
    alphabet = ALNUM + "!#%^*-_+="

    def f():
        while True:
            s = "".join(R.choice(alphabet) for _ in range(n))
            if (any(c.isdigit() for c in s) and any(c.isupper() for c in s)
                    and any(c.islower() for c in s)):
                return s

    return uniq(f)


def url_password(n=None):
    n = n or R.randint(14, 22)

    def f():
        while True:
            s = "".join(R.choice(ALNUM + "-_.~") for _ in range(n))
            if any(c.isdigit() for c in s) and any(c.isupper() for c in s):
                return s

    return uniq(f)


def pick(seq):
    return R.choice(seq)


# ---------------------------------------------------------------- secrets


def base62(n, width):
    out = ""
    while n:
        n, r = divmod(n, 62)
        out = B62[r] + out
    return out.rjust(width, "0")


def github_pat(prefix="ghp_"):
    def f():
        body = "".join(R.choice(ALNUM) for _ in range(30))
        return prefix + body + base62(binascii.crc32(body.encode()), 6)

    return uniq(f)


def aws_key_id():
    return "AKIA" + chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)


def aws_secret():
    return chars(ALNUM + "/+", 40)


def slack_bot():
    return uniq(lambda: "xoxb-%d-%d-%s" % (
        R.randint(10**10, 10**12), R.randint(10**12, 10**13),
        "".join(R.choice(ALNUM) for _ in range(24))))


def slack_webhook():
    return "https://hooks.slack.com/services/T%s/B%s/%s" % (
        chars(UPPER_NUM, 8), chars(UPPER_NUM, 10), alnum(24))


def stripe_live():
    return "sk_live_51" + alnum(R.choice([24, 97]))


def sendgrid():
    return "SG." + chars(B64URL, 22) + "." + chars(B64URL, 43)


def google_api():
    return "AIza" + chars(B64URL, 35)


def rsa_private_pem(header="RSA PRIVATE KEY", lines=None):
    lines = lines or R.randint(12, 25)
    body = "MIIEpAIBAAKCAQEA" + base64.b64encode(rbytes(48 * lines)).decode()
    body = body[: 64 * lines - R.randint(10, 40)]
    rows = [body[i:i + 64] for i in range(0, len(body), 64)]
    USED.add(body)
    return "-----BEGIN %s-----\n%s\n-----END %s-----" % (header, "\n".join(rows), header)


def ec_private_pem():
    der = bytes.fromhex("30770201010420") + rbytes(32) + bytes.fromhex(
        "a00a06082a8648ce3d030107a144034200") + b"\x04" + rbytes(64)
    s = base64.b64encode(der).decode()
    rows = [s[i:i + 64] for i in range(0, len(s), 64)]
    return "-----BEGIN EC PRIVATE KEY-----\n%s\n-----END EC PRIVATE KEY-----" % "\n".join(rows)


def openssh_private():
    blob = b"openssh-key-v1\x00" + b"\x00\x00\x00\x04none\x00\x00\x00\x04none" + rbytes(330)
    s = base64.b64encode(blob).decode()
    rows = [s[i:i + 70] for i in range(0, len(s), 70)]
    return "-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n-----END OPENSSH PRIVATE KEY-----" % "\n".join(rows)


def azure_storage():
    return ("DefaultEndpointsProtocol=https;AccountName=%s;AccountKey=%s;"
            "EndpointSuffix=core.windows.net") % (
        pick(["stbillingprod", "stmediaeus2", "stexportsweu", "sttelemetry01"]), b64(64))


def mapbox_secret():
    payload = base64.urlsafe_b64encode(json.dumps(
        {"u": pick(["acme-mobile", "fleetapp", "ridgeline"]), "a": "cl" + alnum(23).lower()},
        separators=(",", ":")).encode()).decode().rstrip("=")
    return "sk." + payload + "." + chars(B64URL, 22)


# ---------------------------------------------------------------- negatives


def bcrypt_hash():
    return "$2%s$%d$" % (pick(["a", "b", "y"]), pick([10, 11, 12])) + chars(
        "./" + ALNUM, 53)


def argon2_hash():
    return "$argon2id$v=19$m=%d,t=%d,p=%d$%s$%s" % (
        pick([19456, 65536, 47104]), pick([2, 3]), pick([1, 4]), b64(16, False), b64(32, False))


def pub_pem(bits=2048):
    if bits == 4096:
        s = "MIICIjANBgkqhkiG9w0BAQEFAAOCAg8AMIICCgKCAgEA" + base64.b64encode(rbytes(513)).decode()[:680] + "IDAQAB"
    else:
        s = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA" + base64.b64encode(rbytes(255)).decode()[:296] + "IDAQAB"
    rows = [s[i:i + 64] for i in range(0, len(s), 64)]
    return "-----BEGIN PUBLIC KEY-----\n%s\n-----END PUBLIC KEY-----" % "\n".join(rows)


def cert_pem():
    s = "MIID" + base64.b64encode(rbytes(R.randint(700, 900))).decode()
    rows = [s[i:i + 64] for i in range(0, len(s), 64)]
    return "-----BEGIN CERTIFICATE-----\n%s\n-----END CERTIFICATE-----" % "\n".join(rows)


def ssh_ed25519_pub(comment):
    blob = b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + rbytes(32)
    return "ssh-ed25519 %s %s" % (base64.b64encode(blob).decode(), comment)


def vault_blob():
    h = "".join(R.choice("0123456789abcdef") for _ in range(R.randint(10, 20) * 80))
    rows = [h[i:i + 80] for i in range(0, len(h), 80)]
    return "$ANSIBLE_VAULT;1.1;AES256\n" + "\n".join(rows)


def sops_enc(plain_len, typ="str"):
    return "ENC[AES256_GCM,data:%s,iv:%s,tag:%s,type:%s]" % (
        b64(plain_len), b64(32), b64(16), typ)


def bech32(n):
    return chars("qpzry9x8gf2tvdw0s3jn54khce6mua7l", n)


def tiny_png():
    w, h = 4, 4
    raw = b"".join(b"\x00" + rbytes(w * 3) for _ in range(h))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + \
        chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode()


def ext_of(path):
    base = os.path.basename(path)
    if base.startswith(".") and base.count(".") == 1:
        return ""
    return os.path.splitext(base)[1].lstrip(".")


def emit(cls, label, path, text):
    text = text.strip("\n") + "\n"
    n = text.count("\n")
    assert 10 <= n <= 80, (cls, path, n)
    CASES.append({
        "source": "generator-6",
        "class": cls,
        "label": label,
        "ext": ext_of(path),
        "path": path,
        "origin": "make_blind_round3.py seed %d" % SEED,
        "text": text,
    })


SVC = ["billing", "orders", "inventory", "notifications", "ledger", "catalog", "payments",
       "identity", "search", "shipping", "reporting", "onboarding"]


# ====================================================================
# SECRET cases: exactly one live-shaped secret per file
# ====================================================================


def s_spring_yml_db_password(i):
    svc = SVC[i]
    pw = password()
    q = pick(['', '"', "'"])
    host = pick(["db-primary.internal", "pg-%s.c9xk2mq1.eu-west-1.rds.amazonaws.com" % svc,
                 "10.20.4.17", "postgres.prod.svc.cluster.local"])
    emit("spring-yml-db-password", "secret", "services/%s/src/main/resources/application-prod.yml" % svc, f"""
server:
  port: 8080
  shutdown: graceful
spring:
  application:
    name: {svc}-service
  datasource:
    url: jdbc:postgresql://{host}:5432/{svc}
    username: {svc}_app
    password: {q}{pw}{q}
    hikari:
      maximum-pool-size: 20
      connection-timeout: 30000
  jpa:
    open-in-view: false
    hibernate:
      ddl-auto: validate
  flyway:
    enabled: true
    locations: classpath:db/migration
management:
  endpoints:
    web:
      exposure:
        include: health,info,prometheus
logging:
  level:
    root: INFO
    com.acme.{svc}: DEBUG
""")


def s_spring_properties_oauth(i):
    svc = SVC[i + 4]
    provider, cid, sec = [
        ("github", "Iv1." + hexs(16), hexs(40)),
        ("google", "%d-%s.apps.googleusercontent.com" % (R.randint(10**11, 10**12), chars(string.ascii_lowercase + string.digits, 32)), "GOCSPX-" + chars(B64URL, 28)),
        ("okta", "0oa" + alnum(17), chars(B64URL, 40)),
        ("azure", uid(), chars(ALNUM + "~._-", 40)),
    ][i]
    emit("spring-properties-oauth-client-secret", "secret", "%s-api/src/main/resources/application.properties" % svc, f"""
spring.application.name={svc}-api
server.port=8443
server.ssl.enabled=true
server.ssl.key-store=classpath:keystore/{svc}.p12
server.ssl.key-store-type=PKCS12
server.ssl.key-store-password=${{KEYSTORE_PASSWORD}}

# OAuth2 login
spring.security.oauth2.client.registration.{provider}.client-id={cid}
spring.security.oauth2.client.registration.{provider}.client-secret={sec}
spring.security.oauth2.client.registration.{provider}.scope=openid,profile,email
spring.security.oauth2.client.registration.{provider}.redirect-uri={{baseUrl}}/login/oauth2/code/{{registrationId}}

spring.session.store-type=redis
spring.session.timeout=30m
spring.data.redis.host=redis.internal
spring.data.redis.port=6379

management.endpoint.health.probes.enabled=true
management.metrics.tags.application=${{spring.application.name}}
""")


def s_kotlin_const_key(i):
    pkg = pick(["com.acme.payments", "io.fleet.sync", "net.ridge.mail", "org.brightside.chat"])
    name, val, use = [
        ("STRIPE_SECRET_KEY", stripe_live(), "Stripe.apiKey = STRIPE_SECRET_KEY"),
        ("SENDGRID_API_KEY", sendgrid(), 'client.addHeader("Authorization", "Bearer $SENDGRID_API_KEY")'),
        ("SLACK_BOT_TOKEN", slack_bot(), 'headers["Authorization"] = "Bearer $SLACK_BOT_TOKEN"'),
        ("GITHUB_TOKEN", github_pat(), 'request.header("Authorization", "token $GITHUB_TOKEN")'),
    ][i]
    emit("kotlin-const-live-key", "secret", "app/src/main/kotlin/%s/Config.kt" % pkg.replace(".", "/"), f"""
package {pkg}

import java.time.Duration

object Config {{
    const val BASE_URL = "https://api.{pkg.split('.')[1]}.example.com/v2"
    const val USER_AGENT = "{pkg.split('.')[-1]}-client/3.4.1"
    val CONNECT_TIMEOUT: Duration = Duration.ofSeconds(10)
    val READ_TIMEOUT: Duration = Duration.ofSeconds(30)
    const val MAX_RETRIES = 3

    // TODO move to secrets manager before GA
    const val {name} = "{val}"
}}

fun configureClient(headers: MutableMap<String, String>, client: HttpClientBuilder, request: RequestBuilder) {{
    {use}
    headers["User-Agent"] = Config.USER_AGENT
}}
""")


def s_java_value_default(i):
    svc = SVC[i + 8]
    prop, val, field = [
        ("mailgun.api-key", "key-" + hexs(32), "mailgunApiKey"),
        ("twilio.auth-token", hexs(32), "twilioAuthToken"),
        ("datadog.api-key", hexs(32), "datadogApiKey"),
        ("jwt.signing-secret", b64(48), "signingSecret"),
    ][i]
    emit("java-value-hardcoded-default", "secret", "src/main/java/com/acme/%s/config/ExternalApiConfig.java" % svc, f"""
package com.acme.{svc}.config;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.client.RestClient;

@Configuration
public class ExternalApiConfig {{

    @Value("${{{prop.split('.')[0]}.base-url:https://api.example.net}}")
    private String baseUrl;

    @Value("${{{prop}:{val}}}")
    private String {field};

    @Value("${{{prop.split('.')[0]}.timeout-ms:5000}}")
    private int timeoutMs;

    @Bean
    public RestClient {prop.split('.')[0]}Client(RestClient.Builder builder) {{
        return builder
                .baseUrl(baseUrl)
                .defaultHeader("X-Api-Key", {field})
                .build();
    }}
}}
""")


def s_dotnet_appsettings_conn(i):
    svc = SVC[i].capitalize()
    conn = [
        "Server=tcp:sql-%s-prod.database.windows.net,1433;Initial Catalog=%s;User ID=%sapp;Password=%s;Encrypt=True;" % (svc.lower(), svc, svc.lower(), password()),
        "Host=pg.internal;Port=5432;Database=%s;Username=svc_%s;Password=%s;SSL Mode=Require" % (svc.lower(), svc.lower(), password()),
        azure_storage(),
        "Endpoint=sb://%s-bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=%s" % (svc.lower(), b64(32)),
    ][i]
    key = ["DefaultConnection", "Orders", "BlobStorage", "ServiceBus"][i]
    emit("dotnet-appsettings-connection-string", "secret", "src/%s.Api/appsettings.Production.json" % svc, f"""
{{
  "Logging": {{
    "LogLevel": {{
      "Default": "Information",
      "Microsoft.AspNetCore": "Warning"
    }}
  }},
  "AllowedHosts": "*",
  "ConnectionStrings": {{
    "{key}": "{conn}",
    "Redis": "redis.internal:6379,abortConnect=false"
  }},
  "Jwt": {{
    "Issuer": "https://identity.acme.io",
    "Audience": "{svc.lower()}-api",
    "ClockSkewSeconds": 30
  }},
  "FeatureManagement": {{
    "NewCheckout": true,
    "LegacyExport": false
  }}
}}
""")


def s_dotnet_private_key(i):
    pem = rsa_private_pem() if i % 2 == 0 else ec_private_pem()
    esc = pem.replace("\n", "\\n")
    svc = SVC[i + 2].capitalize()
    if i < 2:
        emit("dotnet-private-key-in-config", "secret", "src/%s.Web/appsettings.json" % svc, f"""
{{
  "Kestrel": {{
    "Endpoints": {{
      "Https": {{ "Url": "https://0.0.0.0:5001" }}
    }}
  }},
  "TokenSigning": {{
    "Algorithm": "{'RS256' if i == 0 else 'ES256'}",
    "KeyId": "{hexs(16)}",
    "PrivateKeyPem": "{esc}"
  }},
  "Serilog": {{
    "MinimumLevel": "Information",
    "WriteTo": [ {{ "Name": "Console" }} ]
  }},
  "Cors": {{
    "Origins": [ "https://app.acme.io", "https://admin.acme.io" ]
  }}
}}
""")
    else:
        emit("dotnet-private-key-in-config", "secret", "src/%s.Infrastructure/Signing/DevKeys.cs" % svc, f"""
using System.Security.Cryptography;

namespace {svc}.Infrastructure.Signing;

public static class SigningKeys
{{
    // Production signing key (rotated 2025-11). Loaded when Vault is unreachable.
    private const string PrivateKeyPem = @"{pem}";

    public static {'RSA' if i == 2 else 'ECDsa'} Load()
    {{
        var key = {'RSA' if i == 2 else 'ECDsa'}.Create();
        key.ImportFromPem(PrivateKeyPem);
        return key;
    }}
}}
""")


def s_go_hardcoded(i):
    name, val, hdr = [
        ("slackToken", slack_bot(), "Bearer "),
        ("doToken", "dop_v1_" + hexs(64), "Bearer "),
        ("shopifyToken", "shpat_" + hexs(32), ""),
        ("openAIKey", "sk-" + alnum(20) + "T3BlbkFJ" + alnum(20), "Bearer "),
    ][i]
    pkg = pick(["notify", "provision", "storefront", "assist"])
    emit("go-hardcoded-token", "secret", "internal/%s/client.go" % pkg, f"""
package {pkg}

import (
\t"context"
\t"fmt"
\t"net/http"
\t"time"
)

const (
\tdefaultTimeout = 15 * time.Second
\t{name}      = "{val}"
)

type Client struct {{
\thttp    *http.Client
\tbaseURL string
}}

func New(baseURL string) *Client {{
\treturn &Client{{http: &http.Client{{Timeout: defaultTimeout}}, baseURL: baseURL}}
}}

func (c *Client) do(ctx context.Context, method, path string) (*http.Response, error) {{
\treq, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, nil)
\tif err != nil {{
\t\treturn nil, fmt.Errorf("build request: %w", err)
\t}}
\treq.Header.Set("{'X-Shopify-Access-Token' if 'shop' in name else 'Authorization'}", "{hdr}"+{name})
\treturn c.http.Do(req)
}}
""")


def s_rust_config(i):
    name, val = [
        ("DATABASE_URL", "postgres://ledger_rw:%s@ledger-db.internal:5432/ledger" % url_password()),
        ("GITLAB_TOKEN", "glpat-" + chars(B64URL, 20)),
        ("NPM_TOKEN", "npm_" + alnum(36)),
        ("ANTHROPIC_API_KEY", "sk-ant-api03-" + chars(B64URL, 93) + "AA"),
    ][i]
    emit("rust-config-hardcoded", "secret", "crates/%s/src/config.rs" % pick(["ledger", "mirror", "publish", "assistant"]), f"""
use std::time::Duration;

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
pub struct Config {{
    pub listen_addr: String,
    pub request_timeout: Duration,
    pub credential: String,
}}

/// Fallback used by `cargo run` on a laptop; CI sets the env var.
const {name}: &str = "{val}";

impl Config {{
    pub fn load() -> Self {{
        Self {{
            listen_addr: std::env::var("LISTEN_ADDR").unwrap_or_else(|_| "0.0.0.0:8080".into()),
            request_timeout: Duration::from_secs(30),
            credential: {name}.to_string(),
        }}
    }}
}}

#[cfg(test)]
mod tests {{
    #[test]
    fn loads() {{
        assert!(!super::Config::load().listen_addr.is_empty());
    }}
}}
""")


def s_laravel_config(i):
    if i < 2:
        key, val = [("'secret'", stripe_live()), ("'secret'", "key-" + hexs(32))][i]
        svc = ["stripe", "mailgun"][i]
        emit("laravel-config-php-secret", "secret", "config/services.php", f"""
<?php

return [

    'postmark' => [
        'token' => env('POSTMARK_TOKEN'),
    ],

    'ses' => [
        'key' => env('AWS_ACCESS_KEY_ID'),
        'secret' => env('AWS_SECRET_ACCESS_KEY'),
        'region' => env('AWS_DEFAULT_REGION', 'us-east-1'),
    ],

    '{svc}' => [
        'domain' => 'mg.acme-shop.com',
        {key} => env('{svc.upper()}_SECRET', '{val}'),
        'endpoint' => 'api.eu.mailgun.net',
    ],

    'slack' => [
        'notifications' => [
            'bot_user_oauth_token' => env('SLACK_BOT_USER_OAUTH_TOKEN'),
            'channel' => env('SLACK_BOT_USER_DEFAULT_CHANNEL'),
        ],
    ],

];
""")
    else:
        line = ["MAIL_PASSWORD=%s" % password(), "AWS_SECRET_ACCESS_KEY=%s" % aws_secret()][i - 2]
        emit("laravel-dotenv-committed", "secret", pick(["deploy/.env.production", ".env.staging"]), f"""
APP_NAME="Acme Shop"
APP_ENV=production
APP_DEBUG=false
APP_URL=https://shop.acme.io

LOG_CHANNEL=stack
LOG_LEVEL=warning

DB_CONNECTION=mysql
DB_HOST=127.0.0.1
DB_PORT=3306
DB_DATABASE=shop
DB_USERNAME=shop

MAIL_MAILER=smtp
MAIL_HOST=smtp.mailtrap.io
MAIL_PORT=2525
MAIL_USERNAME=shop-mailer
AWS_ACCESS_KEY_ID=
{line}
AWS_DEFAULT_REGION=eu-central-1

BROADCAST_DRIVER=log
CACHE_DRIVER=redis
QUEUE_CONNECTION=redis
""")


def s_rails_database_yml(i):
    pw = password()
    app = pick(["storefront", "helpdesk", "crm", "scheduler"])
    emit("rails-database-yml-password", "secret", "config/database.yml", f"""
default: &default
  adapter: postgresql
  encoding: unicode
  pool: <%= ENV.fetch("RAILS_MAX_THREADS") {{ 5 }} %>

development:
  <<: *default
  database: {app}_development

test:
  <<: *default
  database: {app}_test

production:
  <<: *default
  database: {app}_production
  host: {app}-db.{pick(['cluster-cx8', 'cluster-q1z', 'cluster-mm2'])}.us-east-2.rds.amazonaws.com
  username: {app}
  password: {pw}
  sslmode: require
""")


def s_ios_xcconfig(i):
    name, val = [
        ("MAPBOX_DOWNLOADS_TOKEN", mapbox_secret()),
        ("SENTRY_AUTH_TOKEN", "sntryu_" + hexs(64)),
        ("REVENUECAT_SECRET_KEY", "sk_" + alnum(32)),
        ("FASTLANE_PASSWORD", password()),
    ][i]
    emit("ios-xcconfig-secret", "secret", "Config/%s.xcconfig" % pick(["Release", "Shared", "Distribution", "AppStore"]), f"""
// Build settings shared by all release targets.
#include "Base.xcconfig"

PRODUCT_BUNDLE_IDENTIFIER = io.acme.{pick(['rider', 'tracker', 'wallet', 'notes'])}
MARKETING_VERSION = 4.{R.randint(0, 20)}.{R.randint(0, 9)}
CURRENT_PROJECT_VERSION = {R.randint(300, 900)}
SWIFT_ACTIVE_COMPILATION_CONDITIONS = RELEASE
SWIFT_OPTIMIZATION_LEVEL = -O
DEVELOPMENT_TEAM = {chars(UPPER_NUM, 10)}
CODE_SIGN_STYLE = Manual
API_HOST = api.acme.io

// Used by the build phase script
{name} = {val}

ENABLE_BITCODE = NO
""")


def s_android_gradle_props(i):
    line = [
        "RELEASE_STORE_PASSWORD=%s\nRELEASE_KEY_PASSWORD=%s" % ("${KEYSTORE_PASS}", password()),
        "artifactoryPassword=AKCp8%s" % alnum(68),
        "gpr.key=%s" % github_pat(),
        "MAPS_SERVER_KEY=%s" % google_api(),
    ][i]
    emit("android-gradle-properties-secret", "secret", pick(["gradle.properties", "app/gradle.properties"]), f"""
# Project-wide Gradle settings.
org.gradle.jvmargs=-Xmx4g -Dfile.encoding=UTF-8
org.gradle.parallel=true
org.gradle.caching=true
android.useAndroidX=true
android.nonTransitiveRClass=true
kotlin.code.style=official

RELEASE_STORE_FILE=../keystore/release.jks
RELEASE_KEY_ALIAS=upload
{line}

VERSION_NAME=2.{R.randint(1, 30)}.0
VERSION_CODE={R.randint(100, 999)}
""")


def s_elixir_prod_exs(i):
    app = pick(["my_app", "chatter", "ledger_web", "inbox"])
    mod = "".join(p.capitalize() for p in app.split("_"))
    line = [
        'secret_key_base: "%s"' % b64(48),
        'secret_key_base: "%s"' % alnum(64),
        None, None][i]
    if line:
        body = f"""config :{app}, {mod}Web.Endpoint,
  url: [host: "{app.replace('_', '-')}.acme.io", port: 443, scheme: "https"],
  http: [ip: {{0, 0, 0, 0}}, port: 4000],
  {line},
  server: true"""
    elif i == 2:
        body = f"""config :{app}, {mod}.Repo,
  url: "ecto://{app}:{url_password()}@{app.replace('_', '-')}-db.internal/{app}_prod",
  pool_size: 10,
  ssl: true"""
    else:
        body = f"""config :{app}, {mod}.Mailer,
  adapter: Swoosh.Adapters.Sendgrid,
  api_key: "{sendgrid()}\""""
    emit("elixir-prod-config-secret", "secret", "config/%s.exs" % pick(["prod", "runtime"]), f"""
import Config

config :logger, level: :info

config :{app}, :dns_cluster_query, System.get_env("DNS_CLUSTER_QUERY")

{body}

config :{app}, Oban,
  repo: {mod}.Repo,
  queues: [default: 10, mailers: 20]

config :swoosh, :api_client, Swoosh.ApiClient.Finch
""")


def s_scala_hocon(i):
    line = [
        'play.http.secret.key = "%s"' % alnum(64),
        'slick.dbs.default.db.password = "%s"' % password(),
        'akka.http.client.auth.token = "%s"' % github_pat(),
        'kafka.sasl.jaas.config = "org.apache.kafka.common.security.plain.PlainLoginModule required username=\\"%s\\" password=\\"%s\\";"' % (chars(UPPER_NUM, 16), chars(ALNUM + "+/", 64)),
    ][i]
    emit("scala-hocon-secret", "secret", pick(["conf/application.conf", "src/main/resources/application.conf", "modules/api/conf/prod.conf"]), f"""
include "base.conf"

play.server.http.port = 9000
play.filters.enabled += "play.filters.cors.CORSFilter"
play.filters.hosts.allowed = [".acme.io", "localhost"]

slick.dbs.default.profile = "slick.jdbc.PostgresProfile$"
slick.dbs.default.db.url = "jdbc:postgresql://db.internal:5432/app"
slick.dbs.default.db.user = "app"

{line}

akka {{
  loglevel = "INFO"
  http.server.idle-timeout = 60s
}}
""")


def s_terraform(i):
    if i < 2:
        emit("terraform-provider-static-creds", "secret", "infra/%s/providers.tf" % pick(["prod", "shared", "eu-west-1"]), f"""
terraform {{
  required_version = ">= 1.6"
  required_providers {{
    aws = {{
      source  = "hashicorp/aws"
      version = "~> 5.40"
    }}
  }}
  backend "s3" {{
    bucket = "acme-tfstate"
    key    = "network/terraform.tfstate"
    region = "eu-west-1"
  }}
}}

provider "aws" {{
  region     = "eu-west-1"
  access_key = "{aws_key_id()}"
  secret_key = "{aws_secret()}"

  default_tags {{
    tags = {{
      Team        = "platform"
      ManagedBy   = "terraform"
    }}
  }}
}}
""")
    else:
        line = ['datadog_api_key = "%s"' % hexs(32), 'cloudflare_api_token = "%s"' % chars(B64URL, 40)][i - 2]
        emit("terraform-tfvars-token", "secret", "environments/%s.auto.tfvars" % pick(["production", "prod", "live"]), f"""
environment        = "production"
region             = "us-east-1"
vpc_cidr           = "10.40.0.0/16"
availability_zones = ["us-east-1a", "us-east-1b", "us-east-1c"]

instance_type  = "m6i.large"
min_capacity   = 3
max_capacity   = 12

{line}

tags = {{
  owner = "sre"
  cost_center = "cc-{R.randint(1000, 9999)}"
}}
""")


def s_ansible_plain(i):
    line = [
        "mysql_root_password: %s" % password(),
        "rabbitmq_admin_password: \"%s\"" % password(),
        "smtp_relay_password: '%s'" % password(),
        "grafana_admin_token: \"glsa_%s_%s\"" % (alnum(32), hexs(8)),
    ][i]
    emit("ansible-plaintext-var", "secret", "inventories/production/group_vars/%s.yml" % pick(["all", "db", "mq", "monitoring"]), f"""
---
ntp_servers:
  - 0.pool.ntp.org
  - 1.pool.ntp.org

app_user: deploy
app_group: deploy
app_root: /srv/app

mysql_bind_address: 0.0.0.0
mysql_max_connections: 500
{line}

firewall_allowed_tcp_ports:
  - 22
  - 443
  - 3306

logrotate_keep_days: 14
""")


def s_docker(i):
    if i < 2:
        line = ["ENV NPM_TOKEN=%s" % ("npm_" + alnum(36)),
                "ARG PIP_INDEX_URL=https://deploy:%s@pypi.acme-internal.net/simple/" % url_password()][i]
        base = ["node:20.11-alpine", "python:3.12-slim"][i]
        emit("dockerfile-build-secret", "secret", "services/%s/Dockerfile" % SVC[i + 1], f"""
FROM {base} AS build
WORKDIR /app
{line}
COPY {'package.json package-lock.json' if i == 0 else 'requirements.txt'} ./
RUN {'npm ci --omit=dev' if i == 0 else 'pip install --no-cache-dir -r requirements.txt'}
COPY . .
RUN {'npm run build' if i == 0 else 'python -m compileall -q .'}

FROM {base}
WORKDIR /app
COPY --from=build /app /app
USER 10001
EXPOSE 8080
HEALTHCHECK CMD wget -qO- http://localhost:8080/healthz || exit 1
CMD {'["node", "dist/server.js"]' if i == 0 else '["gunicorn", "-b", "0.0.0.0:8080", "app:app"]'}
""")
    else:
        line = ["POSTGRES_PASSWORD: %s" % password(), "MINIO_ROOT_PASSWORD: \"%s\"" % password()][i - 2]
        emit("compose-env-password", "secret", pick(["deploy/docker-compose.prod.yml", "ops/compose.yaml"]), f"""
services:
  app:
    image: registry.acme.io/shop/app:2025.11.3
    restart: unless-stopped
    environment:
      DATABASE_HOST: db
      STORAGE_ENDPOINT: http://minio:9000
    depends_on: [db, minio]
  db:
    image: postgres:16
    environment:
      POSTGRES_USER: shop
      {line if i == 2 else 'POSTGRES_PASSWORD_FILE: /run/secrets/pg_password'}
    volumes:
      - pgdata:/var/lib/postgresql/data
  minio:
    image: minio/minio:RELEASE.2024-10-13T13-34-11Z
    command: server /data
    environment:
      MINIO_ROOT_USER: shopadmin
      {line if i == 3 else 'MINIO_BROWSER: "off"'}
volumes:
  pgdata:
""")


def s_ci(i):
    if i == 0:
        emit("github-actions-inline-token", "secret", ".github/workflows/release.yml", f"""
name: release
on:
  push:
    tags: ["v*"]
permissions:
  contents: write
jobs:
  publish:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-go@v5
        with:
          go-version: "1.22"
      - run: go build ./...
      - name: Upload release notes
        run: |
          curl -sS -X POST \\
            -H "Authorization: token {github_pat()}" \\
            -H "Accept: application/vnd.github+json" \\
            https://api.github.com/repos/acme/cli/releases \\
            -d @notes.json
""")
    elif i == 1:
        emit("gitlab-ci-inline-token", "secret", ".gitlab-ci.yml", f"""
stages: [build, deploy]

variables:
  DOCKER_DRIVER: overlay2
  DIGITALOCEAN_ACCESS_TOKEN: "dop_v1_{hexs(64)}"

build:
  stage: build
  image: docker:27
  services: [docker:27-dind]
  script:
    - docker build -t $CI_REGISTRY_IMAGE:$CI_COMMIT_SHORT_SHA .
    - docker push $CI_REGISTRY_IMAGE:$CI_COMMIT_SHORT_SHA

deploy:
  stage: deploy
  image: digitalocean/doctl:1.110.0
  script:
    - doctl kubernetes cluster kubeconfig save prod-ams3
    - kubectl set image deploy/web web=$CI_REGISTRY_IMAGE:$CI_COMMIT_SHORT_SHA
  only: [main]
""")
    elif i == 2:
        emit("jenkinsfile-inline-webhook", "secret", "Jenkinsfile", f"""
pipeline {{
    agent {{ label 'docker' }}
    options {{ timeout(time: 30, unit: 'MINUTES') }}
    environment {{
        REGISTRY = 'registry.acme.io'
        SLACK_WEBHOOK = '{slack_webhook()}'
    }}
    stages {{
        stage('Build') {{
            steps {{ sh './gradlew clean build -x test' }}
        }}
        stage('Test') {{
            steps {{ sh './gradlew test' }}
        }}
    }}
    post {{
        failure {{
            sh "curl -X POST -H 'Content-type: application/json' --data '{{\\"text\\":\\"${{env.JOB_NAME}} failed\\"}}' ${{SLACK_WEBHOOK}}"
        }}
    }}
}}
""")
    else:
        emit("circleci-inline-key", "secret", ".circleci/config.yml", f"""
version: 2.1
orbs:
  node: circleci/node@5.2.0
jobs:
  test:
    docker:
      - image: cimg/node:20.11
        environment:
          SAUCE_USERNAME: acme-ci
          SAUCE_ACCESS_KEY: {uid()}
          NODE_ENV: test
    steps:
      - checkout
      - node/install-packages
      - run: npm run test:e2e -- --browser chrome
workflows:
  main:
    jobs: [test]
""")


def s_nginx_basic(i):
    user = pick(["metrics", "deploy", "grafana", "ops"])
    cred = base64.b64encode(("%s:%s" % (user, password())).encode()).decode()
    emit("nginx-upstream-basic-auth", "secret", "deploy/nginx/conf.d/%s.conf" % pick(["metrics", "upstream", "proxy", "api"]), f"""
upstream backend {{
    server 127.0.0.1:9090;
    keepalive 16;
}}

server {{
    listen 443 ssl http2;
    server_name {user}.acme.io;

    ssl_certificate     /etc/ssl/certs/acme.io.pem;
    ssl_certificate_key /etc/ssl/private/acme.io.key;

    location / {{
        proxy_pass http://backend;
        proxy_set_header Host $host;
        proxy_set_header Authorization "Basic {cred}";
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    }}

    location /healthz {{
        return 200 'ok';
    }}
}}
""")


def s_sql_migration(i):
    val = ["xkeysib-%s-%s" % (hexs(64), alnum(16)), "lin_api_" + alnum(40),
           "sk_live_" + alnum(24), "SG." + chars(B64URL, 22) + "." + chars(B64URL, 43)][i]
    prov = ["brevo", "linear", "stripe", "sendgrid"][i]
    emit("sql-migration-seeded-api-key", "secret", "db/migrate/V%d__seed_%s_integration.sql" % (R.randint(20, 90), prov), f"""
-- Seed the default {prov} integration for the tenant created in V12.
BEGIN;

CREATE TABLE IF NOT EXISTS integrations (
    id          BIGSERIAL PRIMARY KEY,
    tenant_id   UUID NOT NULL,
    provider    TEXT NOT NULL,
    api_key     TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

INSERT INTO integrations (tenant_id, provider, api_key)
VALUES ('{uid()}', '{prov}', '{val}');

CREATE INDEX IF NOT EXISTS integrations_tenant_idx ON integrations (tenant_id);

COMMIT;
""")


def s_makefile(i):
    line = [
        "\tdocker login -u acmebot -p %s registry.acme.io" % password(),
        "\ttwine upload -u __token__ -p pypi-AgEIcHlwaS5vcmc%s dist/*" % chars(B64URL, 140),
        "\tcurl -fsS -u deploy:%s -T build/app.tar.gz https://nexus.acme.io/repository/releases/" % url_password(),
        "\tHEROKU_API_KEY=%s heroku container:release web -a acme-web" % uid(),
    ][i]
    emit("makefile-inline-credential", "secret", "Makefile", f"""
VERSION ?= $(shell git describe --tags --always)
IMAGE   := registry.acme.io/acme/app:$(VERSION)

.PHONY: build test lint publish clean

build:
\tgo build -ldflags "-X main.version=$(VERSION)" -o bin/app ./cmd/app

test:
\tgo test ./... -race -count=1

lint:
\tgolangci-lint run

publish: build
{line}

clean:
\trm -rf bin dist
""")


def s_shell(i):
    line = [
        "export DATADOG_API_KEY=%s" % hexs(32),
        "TELEGRAM_BOT_TOKEN=\"%d:AA%s\"" % (R.randint(10**9, 8 * 10**9), chars(B64URL, 33)),
        "export VAULT_TOKEN=hvs.%s" % alnum(24),
        "DISCORD_WEBHOOK=https://discord.com/api/webhooks/%d/%s" % (R.randint(10**17, 10**18), chars(B64URL, 68)),
    ][i]
    emit("shell-script-exported-token", "secret", "scripts/%s.sh" % pick(["deploy", "notify", "bootstrap", "nightly"]), f"""
#!/usr/bin/env bash
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
ENVIRONMENT="${{1:-staging}}"

{line}

log() {{ printf '[%s] %s\\n' "$(date -u +%FT%TZ)" "$*"; }}

log "deploying to ${{ENVIRONMENT}}"
"${{SCRIPT_DIR}}/build.sh"
kubectl --context "${{ENVIRONMENT}}" apply -f "${{SCRIPT_DIR}}/../k8s/"
log "done"
""")


def s_jwt_secret(i):
    sec = [hexs(64), b64(48), alnum(48), password(32)][i]
    if i < 2:
        emit("jwt-signing-secret", "secret", "src/config/auth.%s" % ["ts", "js"][i], f"""
import {{ registerAs }} from '@nestjs/config';

export default registerAs('auth', () => ({{
  jwt: {{
    secret: process.env.JWT_SECRET ?? '{sec}',
    expiresIn: '15m',
    issuer: 'https://auth.acme.io',
    audience: 'acme-web',
  }},
  refresh: {{
    ttlDays: 30,
    cookieName: '__Host-refresh',
  }},
  bcryptRounds: 12,
}}));
""")
    else:
        emit("jwt-signing-secret", "secret", ["app/core/settings.py", "internal/auth/jwt.go"][i - 2], f"""
from datetime import timedelta
from pydantic_settings import BaseSettings


class Settings(BaseSettings):
    project_name: str = "acme-api"
    api_prefix: str = "/api/v1"
    jwt_algorithm: str = "HS256"
    jwt_secret_key: str = "{sec}"
    access_token_ttl: timedelta = timedelta(minutes=15)
    refresh_token_ttl: timedelta = timedelta(days=30)
    cors_origins: list[str] = ["https://app.acme.io"]


settings = Settings()
""" if i == 2 else f"""
package auth

import (
\t"time"

\t"github.com/golang-jwt/jwt/v5"
)

var hmacSecret = []byte("{sec}")

const tokenTTL = 15 * time.Minute

func Sign(subject string) (string, error) {{
\tclaims := jwt.RegisteredClaims{{
\t\tSubject:   subject,
\t\tExpiresAt: jwt.NewNumericDate(time.Now().Add(tokenTTL)),
\t}}
\treturn jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(hmacSecret)
}}
""")


def s_basic_auth_url(i):
    if i == 0:
        emit("maven-settings-password", "secret", ".mvn/settings.xml", f"""
<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0">
  <servers>
    <server>
      <id>acme-releases</id>
      <username>ci-publisher</username>
      <password>{password()}</password>
    </server>
  </servers>
  <mirrors>
    <mirror>
      <id>acme-central</id>
      <mirrorOf>central</mirrorOf>
      <url>https://nexus.acme.io/repository/maven-public/</url>
    </mirror>
  </mirrors>
</settings>
""")
    elif i == 1:
        emit("npmrc-auth-token", "secret", ".npmrc", f"""
# registry configuration for the monorepo
registry=https://registry.npmjs.org/
@acme:registry=https://npm.pkg.github.com/
//npm.pkg.github.com/:_authToken={github_pat()}
save-exact=true
engine-strict=true
fund=false
audit-level=high
prefer-offline=true
strict-peer-dependencies=false
""")
    elif i == 2:
        emit("pip-conf-basic-auth-url", "secret", "pip.conf", f"""
[global]
timeout = 60
index-url = https://ci-reader:{url_password()}@artifactory.acme.io/artifactory/api/pypi/pypi-virtual/simple
trusted-host = artifactory.acme.io
disable-pip-version-check = true

[install]
no-cache-dir = false
prefer-binary = true
progress-bar = off

[list]
format = columns
""")
    else:
        emit("git-credentials-url", "secret", "ops/mirror-repos.sh", f"""
#!/bin/sh
# Mirror upstream repositories nightly.
set -e
cd /var/lib/mirror
for repo in platform-api platform-web infra-modules; do
  if [ ! -d "$repo.git" ]; then
    git clone --mirror "https://mirror-bot:{'glpat-' + chars(B64URL, 20)}@gitlab.acme.io/platform/$repo.git"
  fi
  git -C "$repo.git" remote update --prune
done
echo "mirrored at $(date)"
exit 0
""")


def s_pulumi(i):
    line = ["  aws:secretKey: %s" % aws_secret(), "  acme:stripeKey: %s" % stripe_live(),
            "  acme:dbPassword: %s" % password(), "  acme:openaiKey: sk-proj-%s" % chars(B64URL, 64)][i]
    emit("pulumi-plaintext-config", "secret", "infra/Pulumi.%s.yaml" % pick(["prod", "production", "live", "prd"]), f"""
config:
  aws:region: eu-west-1
  acme:environment: production
  acme:domain: acme.io
  acme:instanceType: t3.medium
  acme:desiredCount: "4"
{line}
  acme:sentryDsnSecret:
    secure: v1:{b64(12, True)}:{b64(60)}
  acme:vpcCidr: 10.30.0.0/16
  acme:enableWaf: "true"
""")


def s_swift_source(i):
    val = ["sk_live_" + alnum(24), "xoxp-%d-%d-%d-%s" % (R.randint(10**10, 10**11), R.randint(10**10, 10**11), R.randint(10**12, 10**13), hexs(32)),
           "AKCp8" + alnum(68), "shpss_" + hexs(32)][i]
    name = ["stripeSecretKey", "slackUserToken", "artifactoryKey", "shopifySharedSecret"][i]
    emit("swift-hardcoded-secret", "secret", "Sources/%s/Secrets.swift" % pick(["AcmeKit", "Networking", "Core", "Payments"]), f"""
import Foundation

enum Environment {{
    static let apiBaseURL = URL(string: "https://api.acme.io")!
    static let requestTimeout: TimeInterval = 30
}}

enum Secrets {{
    /// Used by the admin build only.
    static let {name} = "{val}"
}}

final class APIClient {{
    private let session: URLSession

    init(session: URLSession = .shared) {{
        self.session = session
    }}

    func authorizedRequest(path: String) -> URLRequest {{
        var request = URLRequest(url: Environment.apiBaseURL.appendingPathComponent(path))
        request.setValue("Bearer \\(Secrets.{name})", forHTTPHeaderField: "Authorization")
        return request
    }}
}}
""")


def s_k8s_secret_stringdata(i):
    kind = i
    val = [password(), "postgresql://app:%s@pg-main:5432/app" % url_password(), aws_secret(), b64(32)][i]
    key = ["redis-password", "DATABASE_URL", "AWS_SECRET_ACCESS_KEY", "ENCRYPTION_KEY"][i]
    if kind == 3:
        # data: base64 of a random key — the decoded value is the secret
        enc = base64.b64encode(val.encode()).decode()
        entry = "data:\n  %s: %s" % (key, enc)
    else:
        entry = "stringData:\n  %s: \"%s\"" % (key, val)
    emit("k8s-secret-manifest-live", "secret", "deploy/k8s/%s-secret.yaml" % pick(["app", "cache", "worker", "api"]), f"""
apiVersion: v1
kind: Secret
metadata:
  name: app-credentials
  namespace: production
  labels:
    app.kubernetes.io/name: app
    app.kubernetes.io/part-of: acme
type: Opaque
{entry}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
  namespace: production
data:
  LOG_LEVEL: info
""")


SECRET_BUILDERS = [
    s_spring_yml_db_password, s_spring_properties_oauth, s_kotlin_const_key, s_java_value_default,
    s_dotnet_appsettings_conn, s_dotnet_private_key, s_go_hardcoded, s_rust_config,
    s_laravel_config, s_rails_database_yml, s_ios_xcconfig, s_android_gradle_props,
    s_elixir_prod_exs, s_scala_hocon, s_terraform, s_ansible_plain, s_docker, s_ci,
    s_nginx_basic, s_sql_migration, s_makefile, s_shell, s_jwt_secret, s_basic_auth_url,
]


# ====================================================================
# NONE cases: hard negatives, no real secret
# ====================================================================


def n_bcrypt_seed(i):
    users = [(pick(["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"]) + str(k), bcrypt_hash()) for k in range(4)]
    if i == 0:
        rows = ",\n".join("  ('%s', '%s@example.test', '%s', NOW())" % (u, u, h) for u, h in users)
        emit("bcrypt-hash-seed-data", "none", "db/seeds/V900__dev_users.sql", f"""
-- Development users. Hashes are bcrypt digests of per-user throwaway
-- passwords; the plaintexts are not stored anywhere.
TRUNCATE users RESTART IDENTITY CASCADE;

INSERT INTO users (username, email, password_hash, created_at) VALUES
{rows};

INSERT INTO roles (name) VALUES ('admin'), ('member'), ('viewer');
INSERT INTO user_roles (user_id, role_id) VALUES (1, 1), (2, 2), (3, 3), (4, 2);
""")
    elif i == 1:
        rows = "\n".join("User.create!(email: \"%s@example.test\", encrypted_password: \"%s\", confirmed_at: Time.current)" % (u, h) for u, h in users)
        emit("bcrypt-hash-seed-data", "none", "db/seeds.rb", f"""
# frozen_string_literal: true

# Seeds for local development. encrypted_password holds Devise bcrypt digests.
puts "Seeding users..."

{rows}

Organization.find_or_create_by!(slug: "acme") do |org|
  org.name = "Acme Inc."
  org.plan = "enterprise"
end

puts "Done."
""")
    elif i == 2:
        rows = "\n".join("            ['name' => '%s', 'email' => '%s@example.test', 'password' => '%s']," % (u, u, h) for u, h in users)
        emit("bcrypt-hash-seed-data", "none", "database/seeders/UserSeeder.php", f"""
<?php

namespace Database\\Seeders;

use Illuminate\\Database\\Seeder;
use Illuminate\\Support\\Facades\\DB;

class UserSeeder extends Seeder
{{
    public function run(): void
    {{
        DB::table('users')->insert([
{rows}
        ]);
    }}
}}
""")
    else:
        rows = "\n".join("  - username: %s\n    password_hash: \"%s\"\n    roles: [viewer]" % (u, h) for u, h in users)
        emit("bcrypt-hash-seed-data", "none", "src/test/resources/fixtures/users.yml", f"""
# Fixture users for integration tests. Only bcrypt digests are stored.
users:
{rows}
""")


def n_argon2(i):
    h = argon2_hash()
    if i == 0:
        emit("argon2-hash-fixture", "none", "test/support/fixtures/accounts_fixtures.ex", f"""
defmodule MyApp.AccountsFixtures do
  @moduledoc "Test helpers for creating accounts."

  # Argon2id digest precomputed so tests do not pay the hashing cost.
  @hashed_password "{h}"

  def unique_user_email, do: "user#{{System.unique_integer()}}@example.com"

  def user_fixture(attrs \\\\ %{{}}) do
    {{:ok, user}} =
      attrs
      |> Enum.into(%{{email: unique_user_email(), hashed_password: @hashed_password}})
      |> MyApp.Accounts.insert_user()

    user
  end
end
""")
    elif i == 1:
        emit("argon2-hash-fixture", "none", "internal/auth/hash_test.go", f"""
package auth

import "testing"

// Digest produced by argon2id with the production parameters.
const knownDigest = "{h}"

func TestParseDigest(t *testing.T) {{
\tp, err := parseDigest(knownDigest)
\tif err != nil {{
\t\tt.Fatalf("parse: %v", err)
\t}}
\tif p.Version != 19 {{
\t\tt.Errorf("version = %d, want 19", p.Version)
\t}}
\tif len(p.Salt) != 16 {{
\t\tt.Errorf("salt length = %d", len(p.Salt))
\t}}
}}
""")
    elif i == 2:
        emit("argon2-hash-fixture", "none", "tests/fixtures/users.json", f"""
{{
  "users": [
    {{
      "id": "{uid()}",
      "email": "admin@example.test",
      "password_hash": "{h}",
      "role": "admin",
      "mfa_enabled": false
    }},
    {{
      "id": "{uid()}",
      "email": "viewer@example.test",
      "password_hash": "{argon2_hash()}",
      "role": "viewer",
      "mfa_enabled": true
    }}
  ]
}}
""")
    else:
        emit("argon2-hash-fixture", "none", "src/auth/tests.rs", f"""
use super::*;

const STORED: &str = "{h}";

#[test]
fn rejects_wrong_password() {{
    let hasher = PasswordHasher::default();
    assert!(!hasher.verify("not-the-password", STORED).unwrap());
}}

#[test]
fn parses_parameters() {{
    let params = Params::from_phc(STORED).unwrap();
    assert_eq!(params.p_cost(), params.p_cost());
    assert!(params.m_cost() >= 19456);
}}
""")


def n_dockerfile_digest(i):
    a, b = hexs(64), hexs(64)
    base = [("golang:1.22-bookworm", "gcr.io/distroless/static-debian12:nonroot"),
            ("rust:1.79-slim", "debian:bookworm-slim"),
            ("node:20-alpine", "nginx:1.27-alpine"),
            ("maven:3.9-eclipse-temurin-21", "eclipse-temurin:21-jre")][i]
    emit("dockerfile-sha256-digest", "none", "%s/Dockerfile" % pick(["cmd/server", "build", "docker", "deploy/app"]), f"""
# syntax=docker/dockerfile:1.7
FROM {base[0]}@sha256:{a} AS build
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/root/.cache make release

FROM {base[1]}@sha256:{b}
LABEL org.opencontainers.image.source="https://github.com/acme/app"
LABEL org.opencontainers.image.revision="{hexs(40)}"
COPY --from=build /src/out/app /usr/local/bin/app
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/app"]
""")


def n_sri(i):
    libs = [("jquery", "3.7.1"), ("bootstrap", "5.3.3"), ("alpinejs", "3.14.1"), ("htmx.org", "2.0.2")]
    lib, ver = libs[i]
    emit("sri-integrity-attribute", "none", "%s/index.html" % pick(["public", "static", "site", "docs"]), f"""
<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Acme Status</title>
  <link rel="stylesheet" href="https://cdn.jsdelivr.net/npm/{lib}@{ver}/dist/{lib}.min.css"
        integrity="sha384-{b64(48)}" crossorigin="anonymous">
  <script src="https://cdn.jsdelivr.net/npm/{lib}@{ver}/dist/{lib}.min.js"
          integrity="sha384-{b64(48)}" crossorigin="anonymous" defer></script>
</head>
<body>
  <main class="container">
    <h1>All systems operational</h1>
    <p>Last updated <time datetime="2025-11-30T10:00:00Z">30 Nov 2025</time></p>
  </main>
</body>
</html>
""")


def n_go_sum(i):
    mods = ["github.com/google/uuid v1.6.0", "github.com/jackc/pgx/v5 v5.6.0", "golang.org/x/crypto v0.24.0",
            "github.com/golang-jwt/jwt/v5 v5.2.1", "go.uber.org/zap v1.27.0", "github.com/spf13/cobra v1.8.1",
            "google.golang.org/grpc v1.64.0", "github.com/stretchr/testify v1.9.0", "golang.org/x/oauth2 v0.21.0",
            "github.com/redis/go-redis/v9 v9.5.3", "github.com/aws/aws-sdk-go-v2 v1.30.0", "golang.org/x/sync v0.7.0"]
    R.shuffle(mods)
    lines = []
    for m in mods[:R.randint(7, 11)]:
        lines.append("%s h1:%s" % (m, b64(32)))
        lines.append("%s/go.mod h1:%s" % (m, b64(32)))
    emit("go-sum-checksums", "none", "%sgo.sum" % ["", "tools/", "services/api/", "cmd/migrate/"][i], "\n".join(lines))


def n_cargo_lock(i):
    crates = [("serde", "1.0.203"), ("tokio", "1.38.0"), ("hmac", "0.12.1"), ("sha2", "0.10.8"),
              ("jsonwebtoken", "9.3.0"), ("rand", "0.8.5"), ("base64", "0.22.1"), ("ring", "0.17.8"),
              ("aes-gcm", "0.10.3"), ("argon2", "0.5.3")]
    R.shuffle(crates)
    blocks = []
    for n, v in crates[:5]:
        blocks.append('[[package]]\nname = "%s"\nversion = "%s"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "%s"' % (n, v, hexs(64)))
    emit("cargo-lock-checksums", "none", "%sCargo.lock" % ["", "fuzz/", "tools/xtask/", "examples/"][i],
         "# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\nversion = 3\n\n" + "\n\n".join(blocks))


def n_package_lock(i):
    pk = [("jsonwebtoken", "9.0.2"), ("bcryptjs", "2.4.3"), ("dotenv", "16.4.5"), ("crypto-js", "4.2.0"),
          ("uuid", "10.0.0"), ("axios", "1.7.2"), ("passport-jwt", "4.0.1"), ("express-session", "1.18.0")]
    R.shuffle(pk)
    entries = []
    for n, v in pk[:3]:
        entries.append(f'''    "node_modules/{n}": {{
      "version": "{v}",
      "resolved": "https://registry.npmjs.org/{n}/-/{n}-{v}.tgz",
      "integrity": "sha512-{b64(64)}",
      "license": "MIT"
    }}''')
    emit("package-lock-integrity", "none", "%spackage-lock.json" % ["", "web/", "packages/auth/", "frontend/"][i], f"""
{{
  "name": "acme-{pick(['web', 'auth', 'admin', 'portal'])}",
  "version": "1.{R.randint(0, 20)}.0",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {{
    "": {{
      "name": "acme",
      "dependencies": {{ "{pk[0][0]}": "^{pk[0][1]}" }}
    }},
{(','+chr(10)).join(entries)}
  }}
}}
""")


def n_uuid_ids(i):
    if i == 0:
        emit("uuid-identifiers", "none", "config/tenants.yml", f"""
# Tenant routing table (ids are public identifiers shown in the admin UI)
tenants:
  - id: {uid()}
    slug: acme
    region: eu-west-1
    plan: enterprise
  - id: {uid()}
    slug: globex
    region: us-east-1
    plan: team
  - id: {uid()}
    slug: initech
    region: us-west-2
    plan: starter
default_tenant_id: {uid()}
""")
    elif i == 1:
        emit("uuid-identifiers", "none", "src/test/java/com/acme/orders/OrderControllerTest.java", f"""
package com.acme.orders;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.UUID;
import org.junit.jupiter.api.Test;

class OrderControllerTest {{
    private static final UUID ORDER_ID = UUID.fromString("{uid()}");
    private static final UUID CUSTOMER_ID = UUID.fromString("{uid()}");
    private static final String REQUEST_ID = "{uid()}";

    @Test
    void echoesRequestId() {{
        var response = TestClient.get("/orders/" + ORDER_ID, REQUEST_ID);
        assertThat(response.header("X-Request-Id")).isEqualTo(REQUEST_ID);
        assertThat(response.json("customerId")).isEqualTo(CUSTOMER_ID.toString());
    }}
}}
""")
    elif i == 2:
        emit("uuid-identifiers", "none", "infra/azure/main.bicepparam", f"""
using './main.bicep'

param location = 'westeurope'
param tenantId = '{uid()}'
param subscriptionId = '{uid()}'
param managedIdentityPrincipalId = '{uid()}'
param logAnalyticsWorkspaceId = '{uid()}'
param appServicePlanSku = 'P1v3'
param tags = {{
  environment: 'prod'
  owner: 'platform'
}}
""")
    else:
        emit("uuid-identifiers", "none", "logs/sample-request.log", "\n".join(
            '%s level=info msg="request completed" request_id=%s trace_id=%s span_id=%s status=%d duration_ms=%d' % (
                "2025-11-30T10:%02d:%02d.%03dZ" % (k, R.randint(0, 59), R.randint(0, 999)), uid(), hexs(32), hexs(16),
                pick([200, 200, 201, 204, 404]), R.randint(3, 400)) for k in range(12)))


def n_stripe_ids(i):
    cus, pi, price, prod, ch, sub = ("cus_" + alnum(14), "pi_3" + alnum(23), "price_1" + alnum(23),
                                     "prod_" + alnum(14), "ch_3" + alnum(23), "sub_1" + alnum(23))
    if i % 2 == 0:
        emit("stripe-object-ids", "none", "test/fixtures/stripe/%s.json" % ["payment_intent_succeeded", "invoice_paid"][i // 2], f"""
{{
  "id": "evt_1{alnum(23)}",
  "object": "event",
  "api_version": "2024-06-20",
  "type": "payment_intent.succeeded",
  "livemode": false,
  "data": {{
    "object": {{
      "id": "{pi}",
      "object": "payment_intent",
      "amount": {R.randint(500, 99000)},
      "currency": "eur",
      "customer": "{cus}",
      "latest_charge": "{ch}",
      "status": "succeeded",
      "metadata": {{ "order_id": "ord_{R.randint(10000, 99999)}" }}
    }}
  }}
}}
""")
    else:
        emit("stripe-object-ids", "none", "config/billing/plans.yml" if i == 1 else "app/Billing/Plans.php", f"""
# Stripe catalogue ids (not credentials)
plans:
  starter:
    product: {prod}
    monthly_price: {price}
    yearly_price: price_1{alnum(23)}
  team:
    product: prod_{alnum(14)}
    monthly_price: price_1{alnum(23)}
    yearly_price: price_1{alnum(23)}
  legacy_subscription_example: {sub}
  support_customer: {cus}
trial_days: 14
""" if i == 1 else f"""
<?php

namespace App\\Billing;

final class Plans
{{
    public const STARTER_PRODUCT = '{prod}';
    public const STARTER_MONTHLY = '{price}';
    public const TEAM_MONTHLY = 'price_1{alnum(23)}';
    public const TEAM_YEARLY = 'price_1{alnum(23)}';

    public static function priceFor(string $plan, bool $yearly): string
    {{
        return match ([$plan, $yearly]) {{
            ['starter', false] => self::STARTER_MONTHLY,
            ['team', false] => self::TEAM_MONTHLY,
            ['team', true] => self::TEAM_YEARLY,
            default => throw new \\InvalidArgumentException("unknown plan $plan"),
        }};
    }}
}}
""")


def n_slack_ids(i):
    emit("slack-channel-ids", "none", ["config/alerting.yml", "ops/oncall/routing.yaml", "bots/standup/config.toml", "src/notify/channels.ts"][i],
         f"""
alerting:
  slack:
    workspace_id: T{chars(UPPER_NUM, 10)}
    channels:
      critical: C{chars(UPPER_NUM, 10)}
      warnings: C{chars(UPPER_NUM, 10)}
      deploys: C{chars(UPPER_NUM, 10)}
    oncall_group: S{chars(UPPER_NUM, 10)}
    escalation_user: U{chars(UPPER_NUM, 10)}
  pagerduty:
    service_id: P{chars(UPPER_NUM, 6)}
    escalation_policy: P{chars(UPPER_NUM, 6)}
  token_env: SLACK_BOT_TOKEN
""" if i < 2 else (f"""
[workspace]
team_id = "T{chars(UPPER_NUM, 10)}"
app_id = "A{chars(UPPER_NUM, 10)}"
bot_user_id = "U{chars(UPPER_NUM, 10)}"

[standup]
channel = "C{chars(UPPER_NUM, 10)}"
post_at = "09:30"
timezone = "Europe/Berlin"
participants = ["U{chars(UPPER_NUM, 10)}", "U{chars(UPPER_NUM, 10)}", "U{chars(UPPER_NUM, 10)}"]
skip_weekends = true
""" if i == 2 else f"""
// Slack conversation ids used by the notifier. Tokens come from the env.
export const CHANNELS = {{
  releases: 'C{chars(UPPER_NUM, 10)}',
  incidents: 'C{chars(UPPER_NUM, 10)}',
  billingAlerts: 'G{chars(UPPER_NUM, 10)}',
}} as const;

export const BOT_USER_ID = 'U{chars(UPPER_NUM, 10)}';

export type Channel = keyof typeof CHANNELS;

export function channelId(name: Channel): string {{
  return CHANNELS[name];
}}
"""))


def n_public_key(i):
    pem = pub_pem(4096 if i == 0 else 2048)
    if i == 0:
        emit("public-key-pem", "none", "src/main/resources/jwt/verify-key.pem", pem)
    elif i == 1:
        esc = pem.replace("\n", "\\n")
        emit("public-key-pem", "none", "src/Identity.Api/appsettings.json", f"""
{{
  "Authentication": {{
    "Schemes": {{
      "Bearer": {{
        "ValidIssuer": "https://login.acme.io",
        "ValidAudiences": [ "orders-api" ],
        "PublicKeyPem": "{esc}"
      }}
    }}
  }},
  "Logging": {{ "LogLevel": {{ "Default": "Information" }} }},
  "AllowedHosts": "*"
}}
""")
    elif i == 2:
        emit("public-key-pem", "none", "config/jwt.exs", f'''
import Config

# Public half only: used to verify tokens issued by the identity service.
config :joken, default_signer: [
  signer_alg: "RS256",
  key_pem: """
{pem}
"""
]
''')
    else:
        emit("ssh-public-key", "none", "infra/modules/bastion/cloud-init.yaml", f"""
#cloud-config
users:
  - name: ops
    groups: [sudo]
    shell: /bin/bash
    sudo: ["ALL=(ALL) NOPASSWD:ALL"]
    ssh_authorized_keys:
      - {ssh_ed25519_pub('alice@laptop')}
      - {ssh_ed25519_pub('bob@workstation')}
      - {ssh_ed25519_pub('ci-deploy@acme')}
package_update: true
packages: [fail2ban, unattended-upgrades]
""")


def n_certificate(i):
    c = cert_pem()
    if i == 0:
        emit("certificate-pem", "none", "deploy/nginx/ssl/acme-ca-chain.crt", c + "\n" + cert_pem())
    elif i == 1:
        ind = "\n".join("    " + l for l in c.split("\n"))
        emit("certificate-pem", "none", "deploy/k8s/ca-bundle-configmap.yaml", f"""
apiVersion: v1
kind: ConfigMap
metadata:
  name: internal-ca
  namespace: platform
data:
  ca.crt: |
{ind}
""")
    elif i == 2:
        emit("certificate-pem", "none", "ios/Acme/Resources/PinnedCertificates.swift", f'''
import Foundation

/// Certificates pinned by URLSessionDelegate. Public certificates only.
enum PinnedCertificates {{
    static let apiLeaf = """
{c}
"""
}}
''')
    else:
        emit("certificate-pem", "none", "terraform/modules/mtls/main.tf", f'''
resource "aws_lb_trust_store" "clients" {{
  name                             = "partner-clients"
  ca_certificates_bundle_s3_bucket = aws_s3_bucket.trust.id
  ca_certificates_bundle_s3_key    = aws_s3_object.bundle.key
}}

resource "aws_s3_object" "bundle" {{
  bucket  = aws_s3_bucket.trust.id
  key     = "bundle.pem"
  content = <<-EOT
{c}
EOT
}}
''')


def n_ansible_vault(i):
    if i < 2:
        emit("ansible-vault-encrypted", "none", "inventories/production/group_vars/all/vault.yml", vault_blob())
    else:
        blob = vault_blob().split("\n")
        ind = "\n".join("  " + l for l in blob)
        emit("ansible-vault-encrypted", "none", "roles/%s/defaults/main.yml" % pick(["postgres", "rabbitmq"]), f"""
---
db_name: app
db_user: app
db_password: !vault |
{ind}
db_port: 5432
db_max_connections: 200
""")


def n_sops(i):
    recip = "age1" + bech32(58)
    emit("sops-encrypted-file", "none", ["secrets/prod.enc.yaml", "clusters/prod/secrets.sops.yaml", "config/app.secrets.enc.yaml", "helm/values.secrets.yaml"][i], f"""
database:
    password: {sops_enc(18)}
    url: {sops_enc(60)}
stripe_api_key: {sops_enc(32)}
jwt_secret: {sops_enc(48)}
sops:
    kms: []
    gcp_kms: []
    azure_kv: []
    hc_vault: []
    age:
        - recipient: {recip}
          enc: |
            -----BEGIN AGE ENCRYPTED FILE-----
            {b64(45)}
            {b64(45)}
            {b64(45)}
            {b64(20, False)}
            -----END AGE ENCRYPTED FILE-----
    lastmodified: "2025-11-{R.randint(10, 28)}T09:12:44Z"
    mac: {sops_enc(32)}
    unencrypted_suffix: _unencrypted
    version: 3.9.1
""")


def n_sealed(i):
    emit("sealed-secret", "none", "clusters/%s/apps/%s-sealedsecret.yaml" % (pick(["prod", "staging"]), SVC[i]), f"""
apiVersion: bitnami.com/v1alpha1
kind: SealedSecret
metadata:
  name: {SVC[i]}-env
  namespace: {SVC[i]}
spec:
  encryptedData:
    DATABASE_PASSWORD: Ag{b64(R.randint(300, 360))}
    API_TOKEN: Ag{b64(R.randint(300, 360))}
  template:
    metadata:
      name: {SVC[i]}-env
      namespace: {SVC[i]}
    type: Opaque
""")


def n_age(i):
    body = base64.b64encode(b"age-encryption.org/v1\n-> X25519 " + rbytes(640)).decode()
    rows = "\n".join(body[k:k + 64] for k in range(0, len(body), 64))
    if i < 2:
        emit("age-encrypted-blob", "none", "secrets/%s.env.age" % pick(["prod", "staging", "ci"]), "-----BEGIN AGE ENCRYPTED FILE-----\n%s\n-----END AGE ENCRYPTED FILE-----" % rows)
    else:
        emit("age-encrypted-blob", "none", "nix/secrets/secrets.nix", f"""
let
  alice = "{ssh_ed25519_pub('').strip()}";
  ci = "age1{bech32(58)}";
  server = "age1{bech32(58)}";
  all = [ alice ci server ];
in
{{
  "db-password.age".publicKeys = all;
  "smtp-password.age".publicKeys = [ alice server ];
  "restic-repo.age".publicKeys = [ server ];
  "grafana-admin.age".publicKeys = all;
  "cloudflare-token.age".publicKeys = [ ci ];
}}
""")


def n_placeholders(i):
    variants = [
        ("src/main/resources/application-example.yml", f"""
spring:
  datasource:
    url: jdbc:postgresql://localhost:5432/app
    username: app
    password: <your-db-password>
  mail:
    host: smtp.example.com
    username: CHANGE_ME
    password: CHANGE_ME
stripe:
  secret-key: sk_live_XXXXXXXXXXXXXXXXXXXXXXXX
  webhook-secret: whsec_REPLACE_WITH_YOUR_SIGNING_SECRET
github:
  token: ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
"""),
        (".env.example", f"""
APP_NAME=Laravel
APP_ENV=local
APP_KEY=
APP_DEBUG=true
APP_URL=http://localhost

DB_CONNECTION=mysql
DB_HOST=127.0.0.1
DB_DATABASE=laravel
DB_USERNAME=root
DB_PASSWORD=

MAIL_PASSWORD=null
AWS_ACCESS_KEY_ID=your-access-key-id
AWS_SECRET_ACCESS_KEY=your-secret-access-key
PUSHER_APP_SECRET=
STRIPE_SECRET=sk_test_...
"""),
        ("config/credentials.yml.example", f"""
# Copy to credentials.yml.enc with `bin/rails credentials:edit`.
aws:
  access_key_id: AKIA################
  secret_access_key: "****************************************"
sendgrid:
  api_key: SG.<redacted>.<redacted>
github:
  client_id: <client id>
  client_secret: "{{{{ github_client_secret }}}}"
secret_key_base: "<run bin/rails secret>"
database:
  password: "${{DATABASE_PASSWORD}}"
"""),
        ("src/Acme.Api/appsettings.Development.json", f"""
{{
  "ConnectionStrings": {{
    "Default": "Server=localhost;Database=acme;User Id=sa;Password=<YourStrong@Passw0rd>;TrustServerCertificate=True"
  }},
  "Smtp": {{
    "Host": "localhost",
    "Port": 1025,
    "Password": "********"
  }},
  "Jwt": {{
    "Secret": "REPLACE_ME_IN_USER_SECRETS",
    "Issuer": "https://localhost:5001"
  }},
  "OpenAI": {{ "ApiKey": "sk-..." }}
}}
"""),
        ("ios/Config/Secrets.xcconfig.template", f"""
// Copy to Secrets.xcconfig (git-ignored) and fill in.
// Never commit the filled-in file.

SENTRY_AUTH_TOKEN = YOUR_SENTRY_AUTH_TOKEN
REVENUECAT_SECRET_KEY = $(REVENUECAT_SECRET_KEY)
FASTLANE_PASSWORD = __set_in_keychain__
MAPBOX_DOWNLOADS_TOKEN = sk.<redacted>
APP_STORE_CONNECT_KEY_ID = XXXXXXXXXX
APP_STORE_CONNECT_ISSUER_ID = 00000000-0000-0000-0000-000000000000
MATCH_PASSWORD = dummy
"""),
        ("terraform/terraform.tfvars.example", f"""
# Example variables. Real values live in the CI secret store.
region            = "eu-west-1"
db_username       = "app"
db_password       = "REPLACE-ME"
datadog_api_key   = "0000000000000000000000000000000"
cloudflare_token  = "xxxx-xxxx-xxxx-xxxx"
github_token      = "<github personal access token>"
slack_webhook_url = "https://hooks.slack.com/services/TXXXXXXXX/BXXXXXXXX/XXXXXXXXXXXXXXXXXXXXXXXX"
enable_backups    = true
backup_retention  = 14
"""),
        ("android/local.properties.sample", f"""
## This file must *NOT* be checked into Version Control Systems,
## copy to local.properties and fill in.
sdk.dir=/Users/you/Library/Android/sdk
RELEASE_STORE_PASSWORD=your_store_password
RELEASE_KEY_PASSWORD=your_key_password
MAPS_API_KEY=YOUR_API_KEY_HERE
gpr.user=your-github-username
gpr.key=ghp_YOUR_TOKEN_HERE
sentry.auth.token=
sentry.org=acme
"""),
        ("config/runtime.exs.sample", f"""
import Config

config :my_app, MyAppWeb.Endpoint,
  secret_key_base: "generate with: mix phx.gen.secret"

config :my_app, MyApp.Repo,
  url: "ecto://USER:PASS@HOST/DATABASE"

config :my_app, MyApp.Mailer,
  api_key: "SG.xxxxxxxxxxxxxxxxxxxxxx.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
"""),
    ]
    path, text = variants[i]
    emit("placeholder-values", "none", path, text)


def n_env_indirection(i):
    variants = [
        ("src/main/kotlin/com/acme/config/Secrets.kt", """
package com.acme.config

object Secrets {
    val stripeSecretKey: String = System.getenv("STRIPE_SECRET_KEY")
        ?: error("STRIPE_SECRET_KEY is not set")
    val databasePassword: String = System.getenv("DB_PASSWORD") ?: ""
    val githubToken: String? = System.getenv("GITHUB_TOKEN")
    val jwtSecret: ByteArray = requireNotNull(System.getenv("JWT_SECRET")) {
        "JWT_SECRET missing"
    }.toByteArray()

    fun redisUrl(): String =
        "redis://:" + (System.getenv("REDIS_PASSWORD") ?: "") + "@" + System.getenv("REDIS_HOST") + ":6379"
}
"""),
        ("cmd/worker/config.go", """
package main

import (
\t"fmt"
\t"os"
)

type config struct {
\tDatabaseURL string
\tSlackToken  string
\tAWSSecret   string
}

func loadConfig() (config, error) {
\tc := config{
\t\tDatabaseURL: os.Getenv("DATABASE_URL"),
\t\tSlackToken:  os.Getenv("SLACK_BOT_TOKEN"),
\t\tAWSSecret:   os.Getenv("AWS_SECRET_ACCESS_KEY"),
\t}
\tif c.DatabaseURL == "" {
\t\treturn c, fmt.Errorf("DATABASE_URL is required")
\t}
\treturn c, nil
}
"""),
        ("src/settings.rs", """
use std::env;

pub struct Settings {
    pub database_url: String,
    pub api_token: String,
    pub webhook_secret: Option<String>,
}

impl Settings {
    pub fn from_env() -> anyhow::Result<Self> {
        Ok(Self {
            database_url: env::var("DATABASE_URL")?,
            api_token: env::var("API_TOKEN").map_err(|_| anyhow::anyhow!("API_TOKEN unset"))?,
            webhook_secret: env::var("WEBHOOK_SECRET").ok(),
        })
    }
}
"""),
        ("config/database.php", """
<?php

return [
    'default' => env('DB_CONNECTION', 'mysql'),
    'connections' => [
        'mysql' => [
            'driver' => 'mysql',
            'host' => env('DB_HOST', '127.0.0.1'),
            'port' => env('DB_PORT', '3306'),
            'database' => env('DB_DATABASE', 'forge'),
            'username' => env('DB_USERNAME', 'forge'),
            'password' => env('DB_PASSWORD', ''),
            'charset' => 'utf8mb4',
        ],
    ],
    'redis' => [
        'default' => ['password' => env('REDIS_PASSWORD')],
    ],
];
"""),
        ("config/database.yml", """
production:
  adapter: postgresql
  encoding: unicode
  pool: <%= ENV.fetch("RAILS_MAX_THREADS") { 5 } %>
  url: <%= ENV["DATABASE_URL"] %>
  username: <%= ENV.fetch("DB_USER", "app") %>
  password: <%= ENV.fetch("DB_PASSWORD") %>
  sslmode: verify-full
  sslrootcert: /etc/ssl/certs/rds-ca-2019-root.pem

development:
  adapter: postgresql
  database: app_development
"""),
        ("config/runtime.exs", """
import Config

if config_env() == :prod do
  database_url =
    System.get_env("DATABASE_URL") ||
      raise "environment variable DATABASE_URL is missing."

  secret_key_base =
    System.fetch_env!("SECRET_KEY_BASE")

  config :my_app, MyApp.Repo, url: database_url, pool_size: 10

  config :my_app, MyAppWeb.Endpoint, secret_key_base: secret_key_base

  config :my_app, MyApp.Mailer, api_key: System.get_env("SENDGRID_API_KEY")
end
"""),
        ("src/Acme.Worker/Program.cs", """
using Acme.Worker;

var builder = Host.CreateApplicationBuilder(args);

var connectionString = Environment.GetEnvironmentVariable("ORDERS_DB_CONNECTION")
    ?? throw new InvalidOperationException("ORDERS_DB_CONNECTION not set");
var serviceBusKey = builder.Configuration["ServiceBus:SharedAccessKey"];
var apiToken = Environment.GetEnvironmentVariable("PARTNER_API_TOKEN");

builder.Services.AddSingleton(new WorkerOptions(connectionString, serviceBusKey, apiToken));
builder.Services.AddHostedService<OrderWorker>();

var host = builder.Build();
host.Run();
"""),
        (".github/workflows/deploy.yml", """
name: deploy
on:
  workflow_dispatch:
jobs:
  deploy:
    runs-on: ubuntu-latest
    environment: production
    steps:
      - uses: actions/checkout@v4
      - uses: aws-actions/configure-aws-credentials@v4
        with:
          aws-access-key-id: ${{ secrets.AWS_ACCESS_KEY_ID }}
          aws-secret-access-key: ${{ secrets.AWS_SECRET_ACCESS_KEY }}
          aws-region: eu-west-1
      - run: ./scripts/deploy.sh
        env:
          DATABASE_PASSWORD: ${{ secrets.DATABASE_PASSWORD }}
          SLACK_WEBHOOK_URL: ${{ secrets.SLACK_WEBHOOK_URL }}
          NPM_TOKEN: ${{ secrets.NPM_TOKEN }}
"""),
        ("Jenkinsfile", """
pipeline {
    agent any
    environment {
        DOCKER_CREDS = credentials('dockerhub-acme')
        SONAR_TOKEN  = credentials('sonarqube-token')
        AWS_SECRET_ACCESS_KEY = credentials('aws-secret-access-key')
    }
    stages {
        stage('Publish') {
            steps {
                withCredentials([string(credentialsId: 'npm-token', variable: 'NPM_TOKEN')]) {
                    sh 'echo "//registry.npmjs.org/:_authToken=${NPM_TOKEN}" > .npmrc && npm publish'
                }
                sh 'echo $DOCKER_CREDS_PSW | docker login -u $DOCKER_CREDS_USR --password-stdin'
            }
        }
    }
}
"""),
        ("ios/Acme/AppSecrets.swift", """
import Foundation

enum AppSecrets {
    static var sentryDSN: String {
        Bundle.main.object(forInfoDictionaryKey: "SENTRY_DSN") as? String ?? ""
    }

    static var backendToken: String? {
        ProcessInfo.processInfo.environment["BACKEND_TOKEN"]
    }

    static var revenueCatKey: String {
        guard let key = Bundle.main.infoDictionary?["REVENUECAT_API_KEY"] as? String else {
            fatalError("REVENUECAT_API_KEY missing from Info.plist")
        }
        return key
    }
}
"""),
        (".gitlab-ci.yml", """
stages: [test, release]

test:
  image: python:3.12
  script:
    - pip install -r requirements-dev.txt
    - pytest -q

release:
  stage: release
  image: python:3.12
  script:
    - pip install build twine
    - python -m build
    - TWINE_PASSWORD=$PYPI_API_TOKEN TWINE_USERNAME=__token__ twine upload dist/*
  rules:
    - if: $CI_COMMIT_TAG
"""),
        ("src/main/resources/application.yml", """
spring:
  datasource:
    url: ${DATABASE_URL:jdbc:postgresql://localhost:5432/app}
    username: ${DB_USERNAME:app}
    password: ${DB_PASSWORD}
  security:
    oauth2:
      client:
        registration:
          github:
            client-id: ${GITHUB_CLIENT_ID}
            client-secret: ${GITHUB_CLIENT_SECRET}
sendgrid:
  api-key: ${SENDGRID_API_KEY:}
jwt:
  secret: ${JWT_SECRET}
"""),
    ]
    path, text = variants[i]
    emit("env-var-indirection", "none", path, text)


def n_secret_manager(i):
    acct = str(R.randint(10**11, 10**12 - 1))
    variants = [
        ("infra/rds.tf", f"""
data "aws_secretsmanager_secret_version" "db" {{
  secret_id = "arn:aws:secretsmanager:eu-west-1:{acct}:secret:prod/orders/db-{alnum(6)}"
}}

locals {{
  db_creds = jsondecode(data.aws_secretsmanager_secret_version.db.secret_string)
}}

resource "aws_db_instance" "orders" {{
  identifier          = "orders-prod"
  engine              = "postgres"
  engine_version      = "16.3"
  instance_class      = "db.r6g.large"
  username            = local.db_creds.username
  password            = local.db_creds.password
  skip_final_snapshot = false
}}
"""),
        ("src/Acme.Api/appsettings.Production.json", f"""
{{
  "KeyVault": {{
    "Uri": "https://kv-acme-prod.vault.azure.net/"
  }},
  "ConnectionStrings": {{
    "Default": "@Microsoft.KeyVault(SecretUri=https://kv-acme-prod.vault.azure.net/secrets/sql-conn/{hexs(32)})"
  }},
  "Stripe": {{
    "SecretKey": "@Microsoft.KeyVault(VaultName=kv-acme-prod;SecretName=stripe-secret-key)"
  }},
  "ManagedIdentityClientId": "{uid()}",
  "Logging": {{ "LogLevel": {{ "Default": "Warning" }} }}
}}
"""),
        ("deploy/k8s/deployment.yaml", f"""
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 3
  selector:
    matchLabels: {{app: api}}
  template:
    metadata:
      labels: {{app: api}}
      annotations:
        vault.hashicorp.com/agent-inject: "true"
        vault.hashicorp.com/agent-inject-secret-db: "database/creds/api-role"
    spec:
      containers:
        - name: api
          image: registry.acme.io/api@sha256:{hexs(64)}
          env:
            - name: DB_PASSWORD
              valueFrom:
                secretKeyRef: {{name: api-db, key: password}}
            - name: STRIPE_SECRET_KEY
              valueFrom:
                secretKeyRef: {{name: stripe, key: secret-key}}
"""),
        ("src/main/resources/bootstrap.yml", f"""
spring:
  application:
    name: ledger
  cloud:
    vault:
      uri: https://vault.acme.internal:8200
      authentication: KUBERNETES
      kubernetes:
        role: ledger
        service-account-token-file: /var/run/secrets/kubernetes.io/serviceaccount/token
      kv:
        enabled: true
        backend: secret
        default-context: ledger
    gcp:
      secretmanager:
        enabled: true
jwt:
  secret: ${{sm://projects/acme-prod-{R.randint(100000, 999999)}/secrets/jwt-secret/versions/latest}}
"""),
        ("deploy/external-secret.yaml", f"""
apiVersion: external-secrets.io/v1beta1
kind: ExternalSecret
metadata:
  name: payments-credentials
  namespace: payments
spec:
  refreshInterval: 1h
  secretStoreRef:
    name: aws-secrets-manager
    kind: ClusterSecretStore
  target:
    name: payments-credentials
  data:
    - secretKey: STRIPE_SECRET_KEY
      remoteRef:
        key: prod/payments/stripe
        property: secret_key
    - secretKey: DB_PASSWORD
      remoteRef:
        key: prod/payments/db
        property: password
"""),
        ("app/services/secrets.py", f"""
import json
import boto3
from functools import lru_cache

SECRET_ID = "arn:aws:secretsmanager:us-east-1:{acct}:secret:prod/reporting/api-{alnum(6)}"


@lru_cache(maxsize=1)
def get_secret(secret_id: str = SECRET_ID) -> dict:
    client = boto3.client("secretsmanager")
    resp = client.get_secret_value(SecretId=secret_id)
    return json.loads(resp["SecretString"])


def database_password() -> str:
    return get_secret()["password"]


def partner_token() -> str:
    return get_secret()["partner_token"]
"""),
        ("roles/app/tasks/secrets.yml", f"""
---
- name: Read database password from Vault
  ansible.builtin.set_fact:
    db_password: "{{{{ lookup('community.hashi_vault.hashi_vault', 'secret=kv/data/app/db:password') }}}}"

- name: Read API token from AWS SSM
  ansible.builtin.set_fact:
    api_token: "{{{{ lookup('amazon.aws.aws_ssm', '/prod/app/api_token', decrypt=true) }}}}"

- name: Render env file
  ansible.builtin.template:
    src: app.env.j2
    dest: /etc/app/app.env
    mode: "0600"
  no_log: true
"""),
        ("chamber/README.md", f"""
# Secrets for the reporting service

Secrets are stored in SSM Parameter Store under `/reporting/` and loaded at
start-up with [chamber](https://github.com/segmentio/chamber):

```sh
chamber exec reporting -- ./bin/reporting
```

| key | where |
| --- | --- |
| `DB_PASSWORD` | `/reporting/db_password` (SecureString, KMS key `alias/reporting`) |
| `STRIPE_SECRET_KEY` | `/reporting/stripe_secret_key` |
| `SLACK_WEBHOOK_URL` | `/reporting/slack_webhook_url` |

Rotate with `chamber write reporting db_password -` reading from stdin.
"""),
    ]
    path, text = variants[i]
    emit("secret-manager-lookup", "none", path, text)


def n_cache_busters(i):
    if i == 0:
        files = {"main.js": "main.%s.js" % hexs(20), "vendor.js": "vendor.%s.js" % hexs(20),
                 "main.css": "main.%s.css" % hexs(20), "runtime.js": "runtime.%s.js" % hexs(8)}
        emit("cache-buster-asset-hash", "none", "public/build/manifest.json", json.dumps(
            {"files": {k: "/static/" + v for k, v in files.items()}, "entrypoints": list("/static/" + v for v in files.values()),
             "buildId": alnum(21), "generatedAt": "2025-11-30T11:02:17Z", "version": "4.%d.0" % R.randint(0, 30),
             "chunks": {"chunk-%d" % k: hexs(16) for k in range(4)}}, indent=2))
    elif i == 1:
        emit("cache-buster-asset-hash", "none", "templates/layout.html", f"""
<!DOCTYPE html>
<html>
<head>
  <meta charset="utf-8">
  <title>{{% block title %}}Acme{{% endblock %}}</title>
  <link rel="stylesheet" href="/static/css/app.css?v={hexs(32)}">
  <link rel="preload" href="/static/fonts/inter.woff2?h={hexs(12)}" as="font" crossorigin>
  <script src="/static/js/app.js?v={hexs(32)}" defer></script>
  <meta name="build" content="{hexs(40)}">
</head>
<body>
  {{% block content %}}{{% endblock %}}
  <footer>Build {R.randint(1000, 9999)} &middot; {hexs(7)}</footer>
</body>
</html>
""")
    elif i == 2:
        emit("build-id-metadata", "none", "dist/build-info.properties", f"""
build.id={uid()}
build.number={R.randint(1000, 99999)}
build.time=2025-11-30T08:14:55Z
git.commit.id={hexs(40)}
git.commit.id.abbrev={hexs(7)}
git.branch=main
git.dirty=false
docker.image.digest=sha256:{hexs(64)}
artifact.sha512={hexs(128)}
gradle.build.scan=https://scans.gradle.com/s/{chars(string.ascii_lowercase + string.digits, 13)}
ci.pipeline.id={R.randint(10**6, 10**7)}
""")
    else:
        emit("build-id-metadata", "none", "android/app/src/main/assets/build.json", json.dumps({
            "versionName": "7.%d.1" % R.randint(0, 20), "versionCode": R.randint(10000, 99999),
            "gitSha": hexs(40), "buildUuid": uid(), "crashlyticsMappingId": hexs(32),
            "bundleHash": b64(32), "etag": '"%s"' % hexs(32), "buildTime": "2025-11-30T07:55:01Z",
            "flavor": "prodRelease", "minSdk": 26, "targetSdk": 35}, indent=2))


def n_csp_nonce(i):
    nonce = b64(16)
    emit("csp-nonce-static-html", "none", "%s/%s.html" % (pick(["public", "site", "www", "landing"]), ["index", "pricing", "about", "login"][i]), f"""
<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta http-equiv="Content-Security-Policy"
        content="default-src 'self'; script-src 'self' 'nonce-{nonce}'; style-src 'self' 'nonce-{nonce}'; object-src 'none'">
  <title>Acme &mdash; {['Home', 'Pricing', 'About us', 'Sign in'][i]}</title>
  <style nonce="{nonce}">
    body {{ font-family: system-ui, sans-serif; margin: 0; }}
    .hero {{ padding: 4rem 2rem; background: #0b3d91; color: #fff; }}
  </style>
</head>
<body>
  <section class="hero"><h1>Ship faster with Acme</h1></section>
  <script nonce="{nonce}">
    document.querySelectorAll('a[data-track]').forEach(function (a) {{
      a.addEventListener('click', function () {{ window.dataLayer && window.dataLayer.push({{event: a.dataset.track}}); }});
    }});
  </script>
</body>
</html>
""")


def n_base64_assets(i):
    png = tiny_png()
    if i == 0:
        emit("base64-data-uri-image", "none", "src/components/Logo.tsx", f"""
import React from 'react';

// 4x4 placeholder inlined so the skeleton renders before the CDN image loads.
const PLACEHOLDER = 'data:image/png;base64,{png}';

export function Logo({{ src, alt }}: {{ src?: string; alt: string }}) {{
  return (
    <img
      src={{src ?? PLACEHOLDER}}
      alt={{alt}}
      width={{120}}
      height={{32}}
      loading="lazy"
      decoding="async"
    />
  );
}}
""")
    elif i == 1:
        font = "d09GMgABAAAAA" + base64.b64encode(rbytes(600)).decode()
        rows = font
        emit("base64-data-uri-font", "none", "assets/css/icons.css", f"""
@font-face {{
  font-family: "acme-icons";
  src: url("data:font/woff2;charset=utf-8;base64,{rows}") format("woff2");
  font-weight: normal;
  font-style: normal;
  font-display: block;
}}

.icon {{
  font-family: "acme-icons" !important;
  speak: never;
  font-style: normal;
  line-height: 1;
}}

.icon-lock::before {{ content: "\\e901"; }}
.icon-key::before {{ content: "\\e902"; }}
""")
    elif i == 2:
        emit("base64-data-uri-image", "none", "app/src/main/res/values/placeholders.xml", f"""
<?xml version="1.0" encoding="utf-8"?>
<resources>
    <!-- Inline fallback avatar used by Coil while loading -->
    <string name="avatar_placeholder_data_uri" translatable="false">data:image/png;base64,{png}</string>
    <string name="app_name">Acme Rider</string>
    <string name="default_channel_id" translatable="false">rides</string>
    <color name="brand_primary">#0B3D91</color>
    <color name="brand_secondary">#FFB81C</color>
    <dimen name="avatar_size">40dp</dimen>
    <integer name="max_retries">3</integer>
    <bool name="enable_crash_reporting">true</bool>
</resources>
""")
    else:
        emit("base64-data-uri-image", "none", "docs/email/templates/welcome.html", f"""
<!doctype html>
<html>
<body style="margin:0;padding:0;background:#f4f4f4">
  <table role="presentation" width="100%" cellpadding="0" cellspacing="0">
    <tr>
      <td align="center" style="padding:24px">
        <img src="data:image/png;base64,{png}" width="48" height="48" alt="Acme">
        <h1 style="font-family:Arial,sans-serif">Welcome to Acme, {{{{first_name}}}}!</h1>
        <p style="font-family:Arial,sans-serif">Click below to confirm your email. The link expires in 24 hours.</p>
        <a href="{{{{confirm_url}}}}" style="background:#0b3d91;color:#fff;padding:12px 20px">Confirm email</a>
      </td>
    </tr>
  </table>
</body>
</html>
""")


def n_feature_flags(i):
    if i == 0:
        emit("feature-flag-client-keys", "none", "web/src/flags.ts", f"""
import {{ initialize }} from 'launchdarkly-js-client-sdk';

// Client-side ID: designed to be embedded in browser bundles.
const LD_CLIENT_SIDE_ID = '{hexs(24)}';

export const FLAGS = {{
  newCheckout: 'new-checkout-flow-2025',
  darkMode: 'ui-dark-mode',
  pricingExperiment: 'pricing-page-exp-{hexs(6)}',
}} as const;

export function startFlags(userKey: string) {{
  return initialize(LD_CLIENT_SIDE_ID, {{ kind: 'user', key: userKey }}, {{
    bootstrap: 'localStorage',
    sendEvents: true,
  }});
}}
""")
    elif i == 1:
        emit("feature-flag-client-keys", "none", "config/features.yml", f"""
# Flag keys and rollout percentages. Keys are identifiers, not credentials.
flags:
  checkout_v2:
    key: chk-v2-{hexs(8)}
    rollout: 25
  ledger_async_export:
    key: ledger-export-{hexs(8)}
    rollout: 100
  search_semantic:
    key: search-sem-{hexs(8)}
    rollout: 5
experiments:
  onboarding_copy:
    id: exp_{alnum(12)}
    variants: [control, short, playful]
""")
    elif i == 2:
        emit("feature-flag-client-keys", "none", "android/app/src/main/kotlin/io/acme/flags/Flags.kt", f"""
package io.acme.flags

import com.statsig.androidsdk.Statsig

object Flags {{
    // Statsig client SDK key: public, shipped in every APK.
    private const val CLIENT_KEY = "client-{alnum(43)}"

    const val GATE_NEW_MAP = "new_map_renderer"
    const val GATE_TIPPING = "in_ride_tipping"

    suspend fun init(app: android.app.Application, userId: String) {{
        Statsig.initialize(app, CLIENT_KEY, com.statsig.androidsdk.StatsigUser(userId))
    }}

    fun isOn(gate: String): Boolean = Statsig.checkGate(gate)
}}
""")
    else:
        emit("feature-flag-client-keys", "none", "unleash/frontend.env", f"""
# Unleash proxy settings for the SPA; the frontend token only reads
# evaluated flags for the `production` environment.
UNLEASH_URL=https://unleash.acme.io/api/frontend
UNLEASH_APP_NAME=acme-web
UNLEASH_ENVIRONMENT=production
UNLEASH_REFRESH_INTERVAL=15
UNLEASH_FLAG_NEW_NAV=web.new-navigation
UNLEASH_FLAG_SEARCH=web.search-v3
UNLEASH_FLAG_BANNER=web.promo-banner-{hexs(4)}
UNLEASH_DISABLE_METRICS=false
UNLEASH_METRICS_INTERVAL=60
""")


def n_analytics_ids(i):
    if i == 0:
        emit("public-analytics-ids", "none", "web/public/index.html", f"""
<!DOCTYPE html>
<html>
<head>
  <meta charset="utf-8">
  <script async src="https://www.googletagmanager.com/gtag/js?id=G-{chars(UPPER_NUM, 10)}"></script>
  <script>
    window.dataLayer = window.dataLayer || [];
    function gtag(){{dataLayer.push(arguments);}}
    gtag('js', new Date());
    gtag('config', 'G-{chars(UPPER_NUM, 10)}', {{ anonymize_ip: true }});
  </script>
  <script>!function(){{var analytics=window.analytics=window.analytics||[];analytics.load("{alnum(32)}");analytics.page();}}();</script>
  <title>Acme</title>
</head>
<body><div id="root"></div></body>
</html>
""")
    elif i == 1:
        emit("public-analytics-ids", "none", "ios/Acme/Info.plist", f"""
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
    <key>CFBundleDisplayName</key>
    <string>Acme</string>
    <key>CFBundleIdentifier</key>
    <string>$(PRODUCT_BUNDLE_IDENTIFIER)</string>
    <key>SentryDSN</key>
    <string>https://{hexs(32)}@o{R.randint(100000, 999999)}.ingest.sentry.io/{R.randint(1000000, 9999999)}</string>
    <key>MixpanelToken</key>
    <string>{hexs(32)}</string>
    <key>AmplitudeApiKey</key>
    <string>{hexs(32)}</string>
    <key>NSLocationWhenInUseUsageDescription</key>
    <string>We use your location to find nearby drivers.</string>
</dict>
</plist>
""")
    elif i == 2:
        emit("public-analytics-ids", "none", "src/main/resources/templates/fragments/analytics.html", f"""
<th:block th:fragment="analytics">
  <!-- Plausible + PostHog; both project keys are public by design -->
  <script defer data-domain="acme.io" src="https://plausible.io/js/script.js"></script>
  <script>
    !function(t,e){{var o,n,p,r;e.__SV||(window.posthog=e,e._i=[],e.init=function(i,s,a){{}})}}(document,window.posthog||[]);
    posthog.init('phc_{alnum(43)}', {{ api_host: 'https://eu.posthog.com', person_profiles: 'identified_only' }});
  </script>
  <script>
    window.intercomSettings = {{ api_base: "https://api-iam.intercom.io", app_id: "{chars(string.ascii_lowercase + string.digits, 8)}" }};
  </script>
  <meta name="facebook-domain-verification" content="{chars(string.ascii_lowercase + string.digits, 30)}">
  <meta name="google-site-verification" content="{chars(B64URL, 43)}">
</th:block>
""")
    else:
        emit("public-analytics-ids", "none", "mobile/src/sentry.ts", f"""
import * as Sentry from '@sentry/react-native';

// DSNs only allow submitting events; they are public.
Sentry.init({{
  dsn: 'https://{hexs(32)}@o{R.randint(100000, 999999)}.ingest.us.sentry.io/{R.randint(1000000, 9999999)}',
  tracesSampleRate: 0.2,
  environment: __DEV__ ? 'development' : 'production',
  release: 'acme-mobile@' + require('../package.json').version,
  enableAutoSessionTracking: true,
}});

export const DATADOG_RUM = {{
  applicationId: '{uid()}',
  clientToken: 'pub{hexs(32)}',
  site: 'datadoghq.eu',
}};
""")


def n_publishable_keys(i):
    if i == 0:
        emit("publishable-key-frontend", "none", "web/src/lib/stripe.ts", f"""
import {{ loadStripe }} from '@stripe/stripe-js';

// Publishable key: safe to ship to browsers.
const STRIPE_PUBLISHABLE_KEY = 'pk_live_51{alnum(97)}';

let stripePromise: ReturnType<typeof loadStripe> | null = null;

export function getStripe() {{
  if (!stripePromise) {{
    stripePromise = loadStripe(STRIPE_PUBLISHABLE_KEY, {{ locale: 'auto' }});
  }}
  return stripePromise;
}}

export const CHECKOUT_SUCCESS_URL = `${{window.location.origin}}/checkout/success`;
""")
    elif i == 1:
        emit("firebase-web-config", "none", "web/src/firebase.js", f"""
import {{ initializeApp }} from "firebase/app";
import {{ getAuth }} from "firebase/auth";

// Firebase web config identifies the project; it is not a credential.
const firebaseConfig = {{
  apiKey: "{google_api()}",
  authDomain: "acme-prod-{R.randint(1000, 9999)}.firebaseapp.com",
  projectId: "acme-prod-{R.randint(1000, 9999)}",
  storageBucket: "acme-prod.appspot.com",
  messagingSenderId: "{R.randint(10**11, 10**12)}",
  appId: "1:{R.randint(10**11, 10**12)}:web:{hexs(22)}",
  measurementId: "G-{chars(UPPER_NUM, 10)}"
}};

export const app = initializeApp(firebaseConfig);
export const auth = getAuth(app);
""")
    elif i == 2:
        header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
        payload = base64.urlsafe_b64encode(json.dumps({"iss": "supabase", "ref": chars(string.ascii_lowercase, 20), "role": "anon", "iat": 1717000000, "exp": 2032576000}, separators=(",", ":")).encode()).decode().rstrip("=")
        emit("publishable-key-frontend", "none", "app/lib/supabase.dart", f"""
import 'package:supabase_flutter/supabase_flutter.dart';

// The anon key is public: row level security protects the data.
const supabaseUrl = 'https://{chars(string.ascii_lowercase, 20)}.supabase.co';
const supabaseAnonKey =
    '{header}.{payload}.{chars(B64URL, 43)}';

Future<void> initSupabase() async {{
  await Supabase.initialize(
    url: supabaseUrl,
    anonKey: supabaseAnonKey,
  );
}}

SupabaseClient get db => Supabase.instance.client;
""")
    else:
        emit("publishable-key-frontend", "none", "ios/Acme/Info.plist", f"""
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
    <key>MBXAccessToken</key>
    <string>pk.{base64.urlsafe_b64encode(json.dumps({"u": "acme-mobile", "a": "cl" + alnum(23).lower()}, separators=(",", ":")).encode()).decode().rstrip("=")}.{chars(B64URL, 22)}</string>
    <key>AlgoliaAppID</key>
    <string>{chars(UPPER_NUM, 10)}</string>
    <key>AlgoliaSearchOnlyKey</key>
    <string>{hexs(32)}</string>
    <key>RecaptchaSiteKey</key>
    <string>6L{chars(B64URL, 38)}</string>
    <key>StripePublishableKey</key>
    <string>pk_live_{alnum(99)}</string>
</dict>
</plist>
""")


def n_rfc_vectors(i):
    variants = [
        ("crypto/hmac/hmac_test.go", """
package hmac

import (
\t"crypto/hmac"
\t"crypto/sha256"
\t"encoding/hex"
\t"testing"
)

// RFC 4231, test case 2.
func TestRFC4231Case2(t *testing.T) {
\tkey := []byte("Jefe")
\tdata := []byte("what do ya want for nothing?")
\twant := "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
\tm := hmac.New(sha256.New, key)
\tm.Write(data)
\tif got := hex.EncodeToString(m.Sum(nil)); got != want {
\t\tt.Fatalf("got %s want %s", got, want)
\t}
}
"""),
        ("src/jws/tests.rs", """
//! Vectors from RFC 7515 appendix A.1 (HS256).

const JWK_K: &str =
    "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow";

const SIGNING_INPUT: &str = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ";

const EXPECTED_SIG: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

#[test]
fn rfc7515_a1() {
    let key = base64url_decode(JWK_K);
    let sig = hs256(&key, SIGNING_INPUT.as_bytes());
    assert_eq!(base64url_encode(&sig), EXPECTED_SIG);
}
"""),
        ("lib/totp/test/rfc6238_test.exs", """
defmodule Totp.RFC6238Test do
  use ExUnit.Case, async: true

  # RFC 6238 appendix B: shared secrets are ASCII "1234567890" repeated.
  @sha1_seed "12345678901234567890"
  @sha256_seed "12345678901234567890123456789012"

  test "SHA1 at T=59" do
    assert Totp.generate(@sha1_seed, 59, digits: 8, algo: :sha) == "94287082"
  end

  test "SHA256 at T=1111111109" do
    assert Totp.generate(@sha256_seed, 1_111_111_109, digits: 8, algo: :sha256) == "68084774"
  end
end
"""),
        ("src/test/kotlin/crypto/AesVectorsTest.kt", """
package crypto

import kotlin.test.Test
import kotlin.test.assertEquals

/** FIPS-197 appendix C.1 (AES-128). */
class AesVectorsTest {
    private val key = "000102030405060708090a0b0c0d0e0f".hexToByteArray()
    private val plaintext = "00112233445566778899aabbccddeeff".hexToByteArray()
    private val expected = "69c4e0d86a7b0430d8cdb78070b4c55a"

    @Test
    fun fips197C1() {
        val out = Aes128(key).encryptBlock(plaintext)
        assertEquals(expected, out.toHexString())
    }
}
"""),
        ("tests/test_x25519_vectors.py", """
\"\"\"RFC 7748 section 6.1 Diffie-Hellman test vector.\"\"\"
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey

ALICE_PRIVATE = bytes.fromhex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
ALICE_PUBLIC = bytes.fromhex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
BOB_PUBLIC = bytes.fromhex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
SHARED = bytes.fromhex("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")


def test_rfc7748_shared_secret():
    alice = X25519PrivateKey.from_private_bytes(ALICE_PRIVATE)
    assert alice.public_key().public_bytes_raw() == ALICE_PUBLIC
    assert alice.exchange(X25519PublicKey.from_public_bytes(BOB_PUBLIC)) == SHARED
"""),
        ("Tests/CryptoTests/Ed25519Tests.swift", """
import XCTest
@testable import Crypto

/// RFC 8032 section 7.1, TEST 1 (empty message).
final class Ed25519Tests: XCTestCase {
    let secretKey = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
    let publicKey = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"

    func testPublicKeyDerivation() throws {
        let sk = try Curve25519.Signing.PrivateKey(rawRepresentation: Data(hex: secretKey))
        XCTAssertEqual(sk.publicKey.rawRepresentation.hexString, publicKey)
    }

    func testSignatureVerifies() throws {
        let sk = try Curve25519.Signing.PrivateKey(rawRepresentation: Data(hex: secretKey))
        let sig = try sk.signature(for: Data())
        XCTAssertTrue(sk.publicKey.isValidSignature(sig, for: Data()))
    }
}
"""),
        ("spec/hkdf_spec.rb", """
# frozen_string_literal: true

require "openssl"

# RFC 5869 appendix A.1
RSpec.describe "HKDF-SHA256" do
  let(:ikm)  { ["0b" * 22].pack("H*") }
  let(:salt) { ["000102030405060708090a0b0c"].pack("H*") }
  let(:info) { ["f0f1f2f3f4f5f6f7f8f9"].pack("H*") }
  let(:okm)  { "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865" }

  it "matches the RFC output" do
    out = OpenSSL::KDF.hkdf(ikm, salt: salt, info: info, length: 42, hash: "SHA256")
    expect(out.unpack1("H*")).to eq(okm)
  end
end
"""),
        ("src/chacha/tests.rs", """
// RFC 8439 section 2.4.2 test vector.
const KEY: [u8; 32] = hex!("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
const NONCE: [u8; 12] = hex!("000000000000004a00000000");
const FIRST_BLOCK: &str = "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b";

#[test]
fn rfc8439_keystream() {
    let mut cipher = ChaCha20::new(&KEY, &NONCE, 1);
    let mut buf = [0u8; 114];
    cipher.apply_keystream(&mut buf);
    assert!(hex::encode(&buf).starts_with(&FIRST_BLOCK[..16]));
    assert_eq!(buf.len(), 114);
}
"""),
    ]
    path, text = variants[i]
    emit("rfc-test-vector", "none", path, text)


def n_doc_snippets(i):
    variants = [
        ("docs/deployment/aws.md", """
# Deploying to AWS

Configure the CLI with an access key of the deploy user. The values below are
the placeholders from the AWS documentation; use your own.

```ini
[default]
aws_access_key_id = AKIAIOSFODNN7EXAMPLE
aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
region = eu-west-1
```

Then run:

```sh
make deploy ENV=staging
```
"""),
        ("README.md", """
# acme-cli

## Authentication

Create a personal access token with the `repo` scope and export it:

```sh
export ACME_GITHUB_TOKEN=ghp_<your token>
acme login --token "$ACME_GITHUB_TOKEN"
```

For GitLab use a token that looks like `glpat-XXXXXXXXXXXXXXXXXXXX`.

## Configuration file

```toml
[auth]
token = "YOUR_TOKEN"
```
"""),
        ("docs/integrations/slack.md", """
# Slack notifications

1. Create an incoming webhook in your workspace.
2. Copy the URL; it has the form
   `https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX`.
3. Store it as `SLACK_WEBHOOK_URL` in the CI secret store (never in the repo).

```yaml
notifications:
  slack:
    webhook_url: ${SLACK_WEBHOOK_URL}
    channel: "#deploys"
```

Bot tokens start with `xoxb-`; user tokens with `xoxp-`. We only need a webhook.
"""),
        ("website/docs/payments.mdx", """
---
title: Accepting payments
---

Set your keys in `.env.local`:

```bash
STRIPE_SECRET_KEY=sk_live_...
NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY=pk_live_...
STRIPE_WEBHOOK_SECRET=whsec_...
```

:::caution
The secret key must only be used server-side. If it leaks, roll it from the
dashboard immediately.
:::

Use `sk_test_` keys locally; they only touch test-mode data.
"""),
    ]
    path, text = variants[i]
    emit("doc-placeholder-snippet", "none", path, text)


def n_password_policy(i):
    variants = [
        ("src/main/java/com/acme/identity/PasswordPolicy.java", """
package com.acme.identity;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

public final class PasswordPolicy {
    public static final int MIN_LENGTH = 12;
    public static final int MAX_LENGTH = 128;
    private static final Pattern UPPER = Pattern.compile("[A-Z]");
    private static final Pattern DIGIT = Pattern.compile("\\\\d");
    private static final Pattern SYMBOL = Pattern.compile("[^A-Za-z0-9]");

    public List<String> violations(String password) {
        List<String> errors = new ArrayList<>();
        if (password.length() < MIN_LENGTH) errors.add("password.too_short");
        if (password.length() > MAX_LENGTH) errors.add("password.too_long");
        if (!UPPER.matcher(password).find()) errors.add("password.needs_upper");
        if (!DIGIT.matcher(password).find()) errors.add("password.needs_digit");
        if (!SYMBOL.matcher(password).find()) errors.add("password.needs_symbol");
        return errors;
    }
}
"""),
        ("app/Rules/StrongPassword.php", """
<?php

namespace App\\Rules;

use Closure;
use Illuminate\\Contracts\\Validation\\ValidationRule;
use Illuminate\\Validation\\Rules\\Password;

class StrongPassword implements ValidationRule
{
    public static function defaults(): Password
    {
        return Password::min(12)->letters()->mixedCase()->numbers()->symbols()->uncompromised(3);
    }

    public function validate(string $attribute, mixed $value, Closure $fail): void
    {
        if (preg_match('/(password|123456|qwerty)/i', $value)) {
            $fail('The :attribute must not contain common words.');
        }
    }
}
"""),
        ("lib/accounts/user.ex", """
defmodule Accounts.User do
  use Ecto.Schema
  import Ecto.Changeset

  schema "users" do
    field :email, :string
    field :password, :string, virtual: true, redact: true
    field :hashed_password, :string, redact: true
    timestamps()
  end

  def password_changeset(user, attrs) do
    user
    |> cast(attrs, [:password])
    |> validate_required([:password])
    |> validate_length(:password, min: 12, max: 72)
    |> validate_format(:password, ~r/[a-z]/, message: "at least one lower case character")
    |> validate_format(:password, ~r/[A-Z]/, message: "at least one upper case character")
    |> validate_format(:password, ~r/[!?@#$%^&*_0-9]/, message: "at least one digit or punctuation character")
  end
end
"""),
        ("src/validation/password.rs", """
use zxcvbn::zxcvbn;

pub const MIN_PASSWORD_LEN: usize = 12;
pub const PASSWORD_FIELD: &str = "password";
pub const TOKEN_HEADER: &str = "X-Reset-Token";

#[derive(Debug, PartialEq)]
pub enum PasswordError {
    TooShort,
    TooWeak(u8),
    ContainsEmail,
}

pub fn check(password: &str, email: &str) -> Result<(), PasswordError> {
    if password.chars().count() < MIN_PASSWORD_LEN {
        return Err(PasswordError::TooShort);
    }
    if password.to_lowercase().contains(&email.to_lowercase()) {
        return Err(PasswordError::ContainsEmail);
    }
    let score = zxcvbn(password, &[email]).score() as u8;
    if score < 3 { Err(PasswordError::TooWeak(score)) } else { Ok(()) }
}
"""),
    ]
    path, text = variants[i]
    emit("password-policy-code", "none", path, text)


def n_i18n(i):
    variants = [
        ("config/locales/en.yml", """
en:
  devise:
    passwords:
      send_instructions: "You will receive an email with instructions on how to reset your password in a few minutes."
      updated: "Your password has been changed successfully. You are now signed in."
    failure:
      invalid: "Invalid %{authentication_keys} or password."
      invalid_token: "Invalid authentication token."
      timeout: "Your session expired. Please sign in again to continue."
  api_tokens:
    created: "Token created. Copy it now: you will not see it again."
    revoked: "The token %{name} has been revoked."
    secret_hint: "Secret keys start with sk_live_ and must never be shared."
"""),
        ("app/src/main/res/values/strings.xml", """
<?xml version="1.0" encoding="utf-8"?>
<resources>
    <string name="app_name">Acme Wallet</string>
    <string name="hint_password">Password</string>
    <string name="hint_confirm_password">Confirm password</string>
    <string name="error_password_too_short">Password must be at least 12 characters</string>
    <string name="error_invalid_token">Your sign-in link has expired. Request a new one.</string>
    <string name="label_api_key">API key</string>
    <string name="label_secret_phrase">Recovery phrase</string>
    <string name="msg_secret_copied">Secret copied to clipboard</string>
    <string name="action_forgot_password">Forgot password?</string>
</resources>
"""),
        ("ios/Acme/de.lproj/Localizable.strings", """
/* Login screen */
"login.password.placeholder" = "Passwort";
"login.password.forgot" = "Passwort vergessen?";
"login.error.wrong_password" = "E-Mail oder Passwort ist falsch.";

/* Token management */
"tokens.title" = "Zugriffstoken";
"tokens.create" = "Neues Token erstellen";
"tokens.secret.warning" = "Das Geheimnis wird nur einmal angezeigt.";
"tokens.expired" = "Dieses Token ist abgelaufen.";

/* Two-factor */
"2fa.secret.label" = "Geheimschluessel";
"2fa.code.placeholder" = "6-stelliger Code";
"""),
        ("web/src/i18n/fr.json", """
{
  "auth": {
    "password": "Mot de passe",
    "passwordRequired": "Le mot de passe est obligatoire",
    "passwordMismatch": "Les mots de passe ne correspondent pas",
    "resetToken": "Jeton de reinitialisation",
    "resetTokenExpired": "Le jeton a expire, demandez-en un nouveau"
  },
  "settings": {
    "apiKeys": "Cles d'API",
    "apiKeyCreated": "Cle creee : copiez-la maintenant",
    "clientSecret": "Secret client",
    "webhookSecret": "Secret de signature du webhook"
  }
}
"""),
    ]
    path, text = variants[i]
    emit("i18n-password-strings", "none", path, text)


def n_ordinary_var_names(i):
    variants = [
        ("src/main/resources/application.yml", """
auth:
  token_ttl: 3600
  refresh_token_ttl: 2592000
  password_field: user_password
  secret_name: prod/identity/jwt
  api_key_header: X-Api-Key
  password_min_length: 12
  session_secret_env: SESSION_SECRET
  secret_rotation_days: 90
  token_issuer: https://identity.acme.io
  client_secret_expiry_warning_days: 30
cache:
  token_cache_size: 10000
"""),
        ("internal/config/defaults.go", """
package config

import "time"

const (
\tTokenTTL            = 15 * time.Minute
\tPasswordResetTTL    = time.Hour
\tSecretName          = "projects/acme/secrets/db-password"
\tPasswordHashCost    = 12
\tAPIKeyPrefixLength  = 8
\tAPIKeyHeader        = "X-Api-Key"
\tSecretKeyEnv        = "APP_SECRET_KEY"
\tDefaultTokenType    = "Bearer"
\tMaxPasswordAttempts = 5
)
"""),
        ("config/auth.php", """
<?php

return [
    'defaults' => ['guard' => 'web', 'passwords' => 'users'],
    'passwords' => [
        'users' => [
            'provider' => 'users',
            'table' => 'password_reset_tokens',
            'expire' => 60,
            'throttle' => 60,
        ],
    ],
    'password_timeout' => 10800,
    'token_key' => 'api_token',
    'secret_header' => 'X-Webhook-Signature',
];
"""),
        ("settings/auth.toml", """
[auth]
token_ttl_seconds = 900
token_algorithm = "RS256"
password_hash = "argon2id"
password_min_length = 12
secret_store = "aws-secrets-manager"
secret_name = "prod/auth/signing-key"
api_key_prefix = "ak_"
api_key_length = 40

[auth.cookies]
session_cookie = "__Host-session"
csrf_token_cookie = "__Host-csrf"
"""),
    ]
    path, text = variants[i]
    emit("secretish-var-names-ordinary-values", "none", path, text)


def n_pinned_actions(i):
    emit("ci-actions-pinned-sha", "none", ".github/workflows/%s.yml" % ["ci", "codeql", "release", "lint"][i], f"""
name: {['ci', 'codeql', 'release', 'lint'][i]}
on:
  pull_request:
  push:
    branches: [main]
permissions:
  contents: read
jobs:
  build:
    runs-on: ubuntu-24.04
    steps:
      - uses: actions/checkout@{hexs(40)} # v4.2.2
      - uses: actions/setup-java@{hexs(40)} # v4.5.0
        with:
          distribution: temurin
          java-version: "21"
          cache: gradle
      - uses: gradle/actions/setup-gradle@{hexs(40)} # v4.1.0
      - run: ./gradlew build --scan
      - uses: actions/upload-artifact@{hexs(40)} # v4.4.3
        with:
          name: reports
          path: build/reports
""")


def n_gpg_fingerprints(i):
    emit("gpg-fingerprint-keyids", "none", ["docker/base/Dockerfile", "scripts/install-deps.sh", "ansible/roles/docker/tasks/main.yml", "ci/verify-release.sh"][i], f"""
FROM debian:bookworm-slim
ENV NODE_MAJOR=20
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl gnupg \\
 && mkdir -p /etc/apt/keyrings \\
 && curl -fsSL https://deb.nodesource.com/gpgkey/nodesource-repo.gpg.key | gpg --dearmor -o /etc/apt/keyrings/nodesource.gpg \\
 && gpg --show-keys --with-fingerprint /etc/apt/keyrings/nodesource.gpg | grep -q "{hexs(40).upper()}" \\
 && echo "deb [signed-by=/etc/apt/keyrings/nodesource.gpg] https://deb.nodesource.com/node_$NODE_MAJOR.x nodistro main" > /etc/apt/sources.list.d/nodesource.list \\
 && apt-get update && apt-get install -y nodejs \\
 && rm -rf /var/lib/apt/lists/*
# Release signing key of the tini project
ENV TINI_KEY={hexs(40).upper()}
RUN gpg --batch --keyserver hkps://keys.openpgp.org --recv-keys "$TINI_KEY"
ENTRYPOINT ["/usr/bin/tini", "--"]
""" if i == 0 else f"""
#!/usr/bin/env bash
# Verify signed release artefacts before installing them.
set -euo pipefail

RELEASE_KEY_FPR="{' '.join(hexs(40).upper()[k:k + 4] for k in range(0, 40, 4))}"
BACKUP_KEY_ID="0x{hexs(16).upper()}"
EXPECTED_SHA256="{hexs(64)}"

gpg --batch --recv-keys "$BACKUP_KEY_ID"
gpg --batch --verify app.tar.gz.asc app.tar.gz
gpg --fingerprint --with-colons | grep -q "${{RELEASE_KEY_FPR// /}}"
echo "$EXPECTED_SHA256  app.tar.gz" | sha256sum -c -
tar -xzf app.tar.gz -C /opt/app
echo "verified and installed"
""" if i != 2 else f"""
---
- name: Add Docker apt key
  ansible.builtin.apt_key:
    url: https://download.docker.com/linux/ubuntu/gpg
    id: {hexs(40).upper()}
    state: present

- name: Add Docker repository
  ansible.builtin.apt_repository:
    repo: "deb [arch=amd64] https://download.docker.com/linux/ubuntu jammy stable"
    state: present

- name: Install Docker
  ansible.builtin.apt:
    name: [docker-ce, docker-ce-cli, containerd.io]
    state: present
    update_cache: true
""")


def n_pulumi_secure(i):
    emit("pulumi-encrypted-config", "none", "infra/Pulumi.%s.yaml" % ["staging", "dev", "qa", "sandbox"][i], f"""
encryptionsalt: v1:{b64(8)}:v1:{b64(12)}:{b64(32)}
config:
  aws:region: us-west-2
  acme:environment: {['staging', 'dev', 'qa', 'sandbox'][i]}
  acme:dbPassword:
    secure: v1:{b64(12)}:{b64(40)}
  acme:stripeSecretKey:
    secure: v1:{b64(12)}:{b64(60)}
  acme:githubToken:
    secure: v1:{b64(12)}:{b64(56)}
  acme:replicas: "2"
  acme:domain: {['staging', 'dev', 'qa', 'sandbox'][i]}.acme.io
""")


def n_sql_schema(i):
    emit("sql-schema-token-columns", "none", "db/migrations/%04d_create_api_tokens.sql" % R.randint(10, 200), f"""
-- API tokens are shown once; only their SHA-256 digest is stored.
CREATE TABLE api_tokens (
    id            UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id       BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    token_prefix  VARCHAR(12) NOT NULL,
    token_sha256  BYTEA NOT NULL,
    scopes        TEXT[] NOT NULL DEFAULT ARRAY['read'],
    last_used_at  TIMESTAMPTZ,
    expires_at    TIMESTAMPTZ,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX api_tokens_sha_idx ON api_tokens (token_sha256);

-- Known digest of the revoked bootstrap token, kept to reject replays.
INSERT INTO revoked_token_digests (token_sha256, revoked_at)
VALUES (decode('{hexs(64)}', 'hex'), '2025-0{i + 1}-15T00:00:00Z');

ALTER TABLE users ADD COLUMN password_changed_at TIMESTAMPTZ;
ALTER TABLE users ADD COLUMN failed_password_attempts INT NOT NULL DEFAULT 0;
""")


def n_nginx_plain(i):
    emit("nginx-config-no-secret", "none", "deploy/nginx/sites-available/%s.conf" % ["app", "api", "static", "admin"][i], f"""
server {{
    listen 443 ssl;
    server_name {['app', 'api', 'static', 'admin'][i]}.acme.io;

    ssl_certificate     /etc/letsencrypt/live/acme.io/fullchain.pem;
    ssl_certificate_key /etc/letsencrypt/live/acme.io/privkey.pem;
    ssl_session_ticket_key /etc/nginx/ticket.key;
    ssl_dhparam /etc/nginx/dhparam.pem;

    auth_basic           "Restricted";
    auth_basic_user_file /etc/nginx/htpasswd;

    add_header Content-Security-Policy "default-src 'self'; script-src 'self' 'sha256-{b64(32)}'" always;
    add_header Strict-Transport-Security "max-age=63072000" always;

    location / {{
        proxy_pass http://127.0.0.1:{R.randint(3000, 9000)};
        proxy_set_header Authorization $http_authorization;
        proxy_set_header X-Request-Id $request_id;
    }}
}}
""")


def n_terraform_random(i):
    emit("terraform-generated-secret-ref", "none", "infra/modules/%s/main.tf" % ["db", "cache", "queue", "search"][i], f"""
resource "random_password" "master" {{
  length           = 32
  special          = true
  override_special = "!#$%&*()-_=+[]{{}}<>:?"
}}

resource "aws_secretsmanager_secret" "master" {{
  name       = "${{var.name}}/master-password"
  kms_key_id = var.kms_key_arn
}}

resource "aws_secretsmanager_secret_version" "master" {{
  secret_id     = aws_secretsmanager_secret.master.id
  secret_string = random_password.master.result
}}

output "master_password_secret_arn" {{
  value     = aws_secretsmanager_secret.master.arn
  sensitive = false
}}
""")


def n_android_build_gradle(i):
    emit("android-gradle-signing-indirection", "none", "app/build.gradle%s" % ["", ".kts", "", ".kts"][i], f"""
plugins {{
    id 'com.android.application'
    id 'org.jetbrains.kotlin.android'
}}

def keystoreProperties = new Properties()
def keystorePropertiesFile = rootProject.file('keystore.properties')
if (keystorePropertiesFile.exists()) {{
    keystoreProperties.load(new FileInputStream(keystorePropertiesFile))
}}

android {{
    namespace 'io.acme.app'
    compileSdk 35
    defaultConfig {{
        applicationId 'io.acme.app'
        minSdk 26
        versionCode {R.randint(100, 999)}
        buildConfigField "String", "API_BASE_URL", '"https://api.acme.io"'
        manifestPlaceholders = [MAPS_API_KEY: System.getenv("MAPS_API_KEY") ?: ""]
    }}
    signingConfigs {{
        release {{
            storeFile file(keystoreProperties['storeFile'] ?: 'release.jks')
            storePassword keystoreProperties['storePassword'] ?: System.getenv('STORE_PASSWORD')
            keyAlias keystoreProperties['keyAlias']
            keyPassword keystoreProperties['keyPassword'] ?: System.getenv('KEY_PASSWORD')
        }}
    }}
}}
""" if i % 2 == 0 else f"""
plugins {{
    id("com.android.application")
    kotlin("android")
}}

android {{
    namespace = "io.acme.rider"
    compileSdk = 35
    defaultConfig {{
        applicationId = "io.acme.rider"
        minSdk = 26
        versionCode = {R.randint(100, 999)}
        buildConfigField("String", "SENTRY_DSN", "\\"${{providers.gradleProperty("sentryDsn").getOrElse("")}}\\"")
    }}
    signingConfigs {{
        create("release") {{
            storeFile = file(providers.environmentVariable("KEYSTORE_PATH").getOrElse("release.jks"))
            storePassword = providers.environmentVariable("KEYSTORE_PASSWORD").orNull
            keyAlias = "upload"
            keyPassword = providers.environmentVariable("KEY_PASSWORD").orNull
        }}
    }}
}}
""")


def n_ansible_template(i):
    emit("jinja-template-secret-vars", "none", "roles/%s/templates/%s" % (["app", "pgbouncer", "grafana", "postfix"][i], ["app.env.j2", "userlist.txt.j2", "grafana.ini.j2", "sasl_passwd.j2"][i]), f"""
# {{{{ ansible_managed }}}}
[server]
http_port = 3000
domain = grafana.acme.io
root_url = https://%(domain)s/

[database]
type = postgres
host = {{{{ grafana_db_host }}}}:5432
name = grafana
user = grafana
password = {{{{ vault_grafana_db_password }}}}

[security]
admin_user = admin
admin_password = {{{{ vault_grafana_admin_password }}}}
secret_key = {{{{ vault_grafana_secret_key }}}}
cookie_secure = true
""")


def n_cargo_toml(i):
    emit("cargo-toml-no-secret", "none", "%sCargo.toml" % ["", "crates/auth/", "crates/vault-client/", "tools/keygen/"][i], f"""
[package]
name = "{['acme-server', 'acme-auth', 'vault-client', 'keygen'][i]}"
version = "0.{R.randint(1, 30)}.{R.randint(0, 9)}"
edition = "2021"
rust-version = "1.75"
description = "Token issuing and secret handling for Acme services"
license = "Apache-2.0"
repository = "https://github.com/acme/platform"
keywords = ["jwt", "secrets", "auth"]

[dependencies]
jsonwebtoken = "9"
secrecy = {{ version = "0.8", features = ["serde"] }}
argon2 = "0.5"
zeroize = {{ version = "1", features = ["derive"] }}
vaultrs = "0.7"

[dev-dependencies]
hex-literal = "0.4"

[features]
default = ["password-hashing"]
password-hashing = []
""")


def n_makefile_plain(i):
    emit("makefile-no-secret", "none", "%sMakefile" % ["", "deploy/", "services/api/", "mobile/"][i], f"""
SHELL := /bin/bash
GIT_SHA := $(shell git rev-parse --short HEAD)
REGISTRY ?= registry.acme.io
IMAGE := $(REGISTRY)/acme/api:$(GIT_SHA)

.PHONY: login push secrets

login:
\t@echo "$$REGISTRY_PASSWORD" | docker login $(REGISTRY) -u "$$REGISTRY_USER" --password-stdin

push: login
\tdocker push $(IMAGE)

secrets:
\t@aws secretsmanager get-secret-value --secret-id prod/api/env --query SecretString --output text > .env
\t@chmod 600 .env

verify:
\t@echo "{hexs(64)}  vendor/tool.tar.gz" | sha256sum -c -
""")


def n_shell_plain(i):
    emit("shell-script-no-secret", "none", "scripts/%s.sh" % ["rotate-keys", "gen-dev-certs", "backup-db", "new-api-key"][i], f"""
#!/usr/bin/env bash
# Generate a fresh key at run time; nothing secret is stored in this script.
set -euo pipefail

OUT_DIR="${{1:-./secrets}}"
mkdir -p "$OUT_DIR"
umask 077

new_secret=$(openssl rand -base64 48)
printf '%s' "$new_secret" | aws secretsmanager put-secret-value \\
  --secret-id "prod/app/session-secret" --secret-string file:///dev/stdin >/dev/null

openssl genpkey -algorithm ed25519 -out "$OUT_DIR/signing.key"
openssl pkey -in "$OUT_DIR/signing.key" -pubout -out "$OUT_DIR/signing.pub"

echo "rotated at $(date -u +%FT%TZ); key id {hexs(16)}"
unset new_secret
""")


def n_dotnet_user_secrets_id(i):
    emit("dotnet-usersecretsid-guid", "none", "src/%s/%s.csproj" % ((SVC[i].capitalize() + ".Api",) * 2), f"""
<Project Sdk="Microsoft.NET.Sdk.Web">

  <PropertyGroup>
    <TargetFramework>net8.0</TargetFramework>
    <Nullable>enable</Nullable>
    <ImplicitUsings>enable</ImplicitUsings>
    <UserSecretsId>{uid()}</UserSecretsId>
    <ProjectGuid>{{{uid().upper()}}}</ProjectGuid>
    <DockerDefaultTargetOS>Linux</DockerDefaultTargetOS>
  </PropertyGroup>

  <ItemGroup>
    <PackageReference Include="Azure.Extensions.AspNetCore.Configuration.Secrets" Version="1.3.2" />
    <PackageReference Include="Azure.Identity" Version="1.12.0" />
    <PackageReference Include="Microsoft.AspNetCore.Authentication.JwtBearer" Version="8.0.7" />
  </ItemGroup>

</Project>
""")


NONE_BUILDERS = [
    (n_bcrypt_seed, 4), (n_argon2, 3), (n_dockerfile_digest, 3), (n_sri, 3), (n_go_sum, 3),
    (n_cargo_lock, 3), (n_package_lock, 3), (n_uuid_ids, 4), (n_stripe_ids, 3), (n_slack_ids, 3),
    (n_public_key, 4), (n_certificate, 4), (n_ansible_vault, 3), (n_sops, 3), (n_sealed, 2),
    (n_age, 3), (n_placeholders, 8), (n_env_indirection, 12), (n_secret_manager, 8),
    (n_cache_busters, 4), (n_csp_nonce, 3), (n_base64_assets, 4), (n_feature_flags, 4),
    (n_analytics_ids, 4), (n_publishable_keys, 4), (n_rfc_vectors, 8), (n_doc_snippets, 4),
    (n_password_policy, 4), (n_i18n, 4), (n_ordinary_var_names, 4), (n_pinned_actions, 2),
    (n_gpg_fingerprints, 3), (n_pulumi_secure, 2), (n_sql_schema, 2), (n_nginx_plain, 2),
    (n_terraform_random, 2), (n_android_build_gradle, 3), (n_ansible_template, 1),
    (n_cargo_toml, 2), (n_makefile_plain, 2), (n_shell_plain, 2), (n_dotnet_user_secrets_id, 2),
]

SECRET_BUILDERS += [s_pulumi, s_swift_source, s_k8s_secret_stringdata]


def main():
    for k, b in enumerate(SECRET_BUILDERS):
        for i in range(4 if k % 2 == 0 or b in (s_ci, s_basic_auth_url) else 3):
            b(i)
    for b, n in NONE_BUILDERS:
        for i in range(n):
            b(i)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "generator6.jsonl")
    with open(out, "w", encoding="utf-8") as f:
        for c in CASES:
            f.write(json.dumps(c, ensure_ascii=False, sort_keys=False) + "\n")
    n_sec = sum(c["label"] == "secret" for c in CASES)
    print("wrote %d cases (%d secret, %d none) to %s" % (len(CASES), n_sec, len(CASES) - n_sec, out))


if __name__ == "__main__":
    main()
