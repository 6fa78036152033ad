#!/usr/bin/env python3
"""Blind held-out corpus round 9 (generator-12): backend services in compiled/typed
ecosystems (Java/Spring, Kotlin/Android, .NET, Go, Rust, Scala/Play).
Deterministic: all randomness comes from R = random.Random(SEED)."""
import base64
import hashlib
import hmac
import json
import os
import random
import string

SEED = 20261212
R = random.Random(SEED)
SOURCE = "generator-12"
ORIGIN = "make_blind_round9.py seed 20261212"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "generator12.jsonl")

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DG = string.digits
AN = UP + LO + DG
URLSAFE = AN + "-_"
B64 = AN + "+/"
HEXL = "0123456789abcdef"
USED = set()


def _u(v):
    if v in USED:
        return None
    USED.add(v)
    return v


def rs(alpha, n):
    while True:
        v = _u("".join(R.choice(alpha) for _ in range(n)))
        if v:
            return v


def hx(n):
    return rs(HEXL, n)


def HX(n):
    return rs("0123456789ABCDEF", n)


def digits(n):
    return str(R.randint(1, 9)) + rs(DG, n - 1)


def rbytes(n):
    return bytes(R.getrandbits(8) for _ in range(n))


def b64bytes(n):
    while True:
        v = _u(base64.b64encode(rbytes(n)).decode())
        if v:
            return v


def b64url_bytes(n):
    while True:
        v = _u(base64.urlsafe_b64encode(rbytes(n)).decode().rstrip("="))
        if v:
            return v


def uuid4():
    while True:
        h = "%032x" % R.getrandbits(128)
        v = "%s-%s-4%s-%s%s-%s" % (h[:8], h[8:12], h[13:16], R.choice("89ab"), h[17:20], h[20:32])
        v = _u(v)
        if v:
            return v


WORDS = ["harbor", "kestrel", "maple", "tundra", "lantern", "quartz", "falcon", "cobalt", "meadow",
         "ember", "glacier", "violet", "orchid", "summit", "willow", "canyon", "saffron", "pebble",
         "thistle", "marble", "juniper", "copper", "raven", "delta", "onyx", "cedar", "harvest", "lotus"]


def pw(kind="any", n=None):
    """Realistic non-placeholder password. kind: any | url | xml | conn | plain"""
    style = R.random()
    if kind == "url":
        spec = "!*-_.~"
    elif kind == "xml":
        spec = "!#$%*-_.^+="
    elif kind == "conn":
        spec = "!#$%*-_.^+@"
    elif kind == "plain":
        spec = ""
    else:
        spec = "!#$%*-_.^+@&"
    while True:
        if style < 0.35:
            w1, w2 = R.sample(WORDS, 2)
            sep = R.choice(spec) if spec else ""
            v = w1.capitalize() + sep + w2.capitalize() + str(R.randint(10, 9999))
            if spec and R.random() < 0.5:
                v += R.choice(spec)
        else:
            n2 = n or R.randint(14, 24)
            alpha = AN + spec
            v = "".join(R.choice(alpha) for _ in range(n2))
            if not (any(c.isdigit() for c in v) and any(c.isupper() for c in v) and any(c.islower() for c in v)):
                continue
            if not (v[0].isalnum() and v[-1] != "\\"):
                continue
        v = _u(v)
        if v:
            return v


# ---- issuer formats -------------------------------------------------------
def aws_akid(prefix="AKIA"):
    return prefix + rs("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)


def aws_secret():
    return rs(B64, 40)


def ghp():
    return "ghp_" + rs(AN, 36)


def gh_fine():
    return "github_pat_11" + rs(UP + DG, 20) + "_" + rs(AN, 59)


def glpat():
    return "glpat-" + rs(URLSAFE, 20)


def stripe_sk(kind="sk"):
    return "%s_live_51%s" % (kind, rs(AN, R.choice([97, 97, 22])))


def stripe_pk():
    return "pk_live_51" + rs(AN, 97)


def whsec():
    return "whsec_" + rs(AN, 32)


def slack_bot():
    return "xoxb-%s-%s-%s" % (digits(12), digits(13), rs(AN, 24))


def slack_hook():
    return "https://hooks.slack.com/services/T%s/B%s/%s" % (rs(UP + DG, 8), rs(UP + DG, 10), rs(AN, 24))


def discord_hook():
    return "https://discord.com/api/webhooks/%s/%s" % (digits(19), rs(URLSAFE, 68))


def teams_hook():
    return "https://%s.webhook.office.com/webhookb2/%s@%s/IncomingWebhook/%s/%s" % (
        R.choice(["contoso", "acmecorp", "northwind"]), uuid4(), uuid4(), hx(32), uuid4())


def sendgrid():
    return "SG." + rs(URLSAFE, 22) + "." + rs(URLSAFE, 43)


def twilio_sid():
    return "AC" + hx(32)


def twilio_key():
    return "SK" + hx(32)


def google_key():
    return "AIza" + rs(URLSAFE, 35)


def azure_storage_key():
    return b64bytes(64)


def azure_sas_key():
    return b64bytes(32)


def azure_ad_secret():
    return rs(AN, 3) + "8Q~" + rs(AN + "-_.~", 34)


def openai_key():
    return "sk-proj-" + rs(URLSAFE, 74) + "T3BlbkFJ" + rs(URLSAFE, 74)


def anthropic_key():
    return "sk-ant-api03-" + rs(URLSAFE, 93) + "AA"


def npm_tok():
    return "npm_" + rs(AN, 36)


def datadog_api():
    return hx(32)


def mailgun():
    return "key-" + hx(32)


def newrelic_license():
    return hx(36) + "NRAL"


def ld_sdk():
    return "sdk-" + uuid4()


def confluent_key():
    return rs(UP + DG, 16)


def confluent_secret():
    return rs(B64, 64)


def jwt(payload, alg="HS256"):
    def enc(o):
        return base64.urlsafe_b64encode(json.dumps(o, separators=(",", ":")).encode()).decode().rstrip("=")
    sig = b64url_bytes(32 if alg.startswith("HS") else 256)
    return enc({"alg": alg, "typ": "JWT"}) + "." + enc(payload) + "." + sig


def wrap64(s):
    return "\n".join(s[i:i + 64] for i in range(0, len(s), 64))


def pem_private(kind="pkcs8"):
    if kind == "pkcs8":
        body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ" + b64bytes(1170)[:1574]
        return "-----BEGIN PRIVATE KEY-----\n" + wrap64(body) + "\n-----END PRIVATE KEY-----\n"
    if kind == "rsa":
        body = "MIIEowIBAAKCAQEA" + b64bytes(1180)[:1572]
        return "-----BEGIN RSA PRIVATE KEY-----\n" + wrap64(body) + "\n-----END RSA PRIVATE KEY-----\n"
    if kind == "ec":
        body = "MHcCAQEEI" + b64bytes(120)[:151] + "=="
        return "-----BEGIN EC PRIVATE KEY-----\n" + wrap64(body) + "\n-----END EC PRIVATE KEY-----\n"
    raise ValueError(kind)


def pem_public():
    body = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA" + rs(B64, 342) + "IDAQAB"
    return "-----BEGIN PUBLIC KEY-----\n" + wrap64(body) + "\n-----END PUBLIC KEY-----\n"


def pem_cert():
    body = "MIID" + rs("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef", 1) + "zCCAl+gAwIBAgI" + rs(B64, 1170) + "="
    return "-----BEGIN CERTIFICATE-----\n" + wrap64(body) + "\n-----END CERTIFICATE-----\n"


def sha256hex():
    return hx(64)


def sha1hex():
    return hx(40)


def bcrypt(cost=None):
    return "$2a$%02d$%s" % (cost or R.choice([10, 10, 12]), rs("./" + AN, 53))


def argon2():
    return "$argon2id$v=19$m=65536,t=3,p=4$%s$%s" % (b64bytes(16).rstrip("="), b64bytes(32).rstrip("="))


def aspnet_identity_hash():
    # ASP.NET Core Identity v3 format: marker, PRF=HMACSHA512, 100000 iterations, 16-byte salt, 32-byte subkey
    raw = bytes([1, 0, 0, 0, 2, 0, 1, 0x86, 0xA0, 0, 0, 0, 16]) + rbytes(48)
    while True:
        v = _u(base64.b64encode(raw).decode())
        if v:
            return v


def host():
    return R.choice(["db-prod-01.internal", "pg-primary.svc.cluster.local", "orders-db.c8xk2mzq1vlp.eu-west-1.rds.amazonaws.com",
                     "mysql-main.corp.local", "10.20.4.17", "sql-prod-ne.database.windows.net", "billing-db.prod.lan",
                     "inventory-pg.internal.example.net", "ledger-db-a.us-east-2.rds.amazonaws.com"])


def pick(*xs):
    return R.choice(xs)


def user():
    return R.choice(["svc_orders", "app_user", "billing_rw", "inventory", "api_service", "reporting_ro", "ledger_app",
                     "catalog_svc", "notify", "payments_app", "crm_sync", "etl_loader"])


def pkg():
    return R.choice(["com.acme.orders", "io.northwind.billing", "com.contoso.inventory", "dev.lumen.payments",
                     "org.fabrikam.catalog", "com.tailspin.notify", "net.wingtip.ledger", "com.globex.crm"])


def svc():
    return R.choice(["orders-service", "billing-api", "inventory-svc", "payments-gateway", "catalog-service",
                     "notification-service", "ledger-api", "crm-sync", "shipping-service", "pricing-engine"])


CASES = []
GENS = []


def case(cls, label, count):
    def deco(f):
        GENS.append((cls, label, count, f))
        return f
    return deco

# =========================================================================
# Java / Spring Boot  -- secrets
# =========================================================================
@case("spring-yaml-datasource-password", "secret", 4)
def _(v):
    h, u, p = host(), user(), pw()
    if v == 0:
        return "src/main/resources/application-prod.yml", f"""spring:
  application:
    name: {svc()}
  datasource:
    url: jdbc:postgresql://{h}:5432/orders
    username: {u}
    password: '{p}'
    hikari:
      maximum-pool-size: 20
      connection-timeout: 30000
      pool-name: orders-pool
  jpa:
    hibernate:
      ddl-auto: validate
    open-in-view: false
    properties:
      hibernate.jdbc.batch_size: 50

server:
  port: 8080
  shutdown: graceful

management:
  endpoints:
    web:
      exposure:
        include: health,info,prometheus
"""
    if v == 1:
        p2 = pw()
        return "src/main/resources/application.yml", f"""spring:
  profiles:
    active: local
  jpa:
    show-sql: false
---
spring:
  config:
    activate:
      on-profile: local
  datasource:
    url: jdbc:h2:mem:devdb;MODE=PostgreSQL
    username: sa
    password:
---
spring:
  config:
    activate:
      on-profile: staging
  datasource:
    url: jdbc:mysql://{h}:3306/catalog?useSSL=true&serverTimezone=UTC
    username: {u}
    password: {p2}
  flyway:
    enabled: true
    baseline-on-migrate: true
"""
    if v == 2:
        return "config/application-prod.properties", f"""# Production profile - loaded with --spring.profiles.active=prod
spring.datasource.url=jdbc:sqlserver://{h}:1433;databaseName=Ledger;encrypt=true;trustServerCertificate=false
spring.datasource.username={u}
spring.datasource.password={p}
spring.datasource.driver-class-name=com.microsoft.sqlserver.jdbc.SQLServerDriver
spring.datasource.hikari.maximum-pool-size=30
spring.jpa.properties.hibernate.dialect=org.hibernate.dialect.SQLServerDialect
spring.jpa.hibernate.ddl-auto=none

logging.level.root=WARN
logging.level.{pkg()}=INFO
server.compression.enabled=true
"""
    ru = user()
    rp = pw(kind="url")
    return "src/main/resources/application-docker.yml", f"""spring:
  r2dbc:
    url: r2dbc:postgresql://{h}:5432/inventory
    username: {ru}
    password: "{p}"
    pool:
      initial-size: 5
      max-size: 20
  flyway:
    url: jdbc:postgresql://{h}:5432/inventory
    user: {ru}
    password: "{p}"
    locations: classpath:db/migration
  data:
    redis:
      host: redis
      port: 6379
  rabbitmq:
    host: rabbitmq
    username: inventory
    password: {rp}
"""


@case("spring-value-annotation-default-secret", "secret", 4)
def _(v):
    p = pkg()
    if v == 0:
        k = stripe_sk()
        return f"src/main/java/{p.replace('.', '/')}/payment/StripeConfig.java", f"""package {p}.payment;

import com.stripe.Stripe;
import jakarta.annotation.PostConstruct;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Configuration;

@Configuration
public class StripeConfig {{

    @Value("${{stripe.api-key:{k}}}")
    private String apiKey;

    @Value("${{stripe.webhook.tolerance-seconds:300}}")
    private long toleranceSeconds;

    @PostConstruct
    void init() {{
        Stripe.apiKey = apiKey;
        Stripe.setMaxNetworkRetries(2);
    }}

    public long getToleranceSeconds() {{
        return toleranceSeconds;
    }}
}}
"""
    if v == 1:
        s = b64bytes(48)
        return f"src/main/java/{p.replace('.', '/')}/security/JwtProperties.java", f"""package {p}.security;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

@Component
public class JwtProperties {{

    @Value("${{app.jwt.issuer:https://auth.{p.split('.')[1]}.com}}")
    private String issuer;

    @Value("${{app.jwt.audience:api}}")
    private String audience;

    @Value("${{app.jwt.secret:{s}}}")
    private String secret;

    @Value("${{app.jwt.ttl-minutes:60}}")
    private int ttlMinutes;

    public String getIssuer() {{ return issuer; }}
    public String getAudience() {{ return audience; }}
    public String getSecret() {{ return secret; }}
    public int getTtlMinutes() {{ return ttlMinutes; }}
}}
"""
    if v == 2:
        k = sendgrid()
        return f"src/main/kotlin/{p.replace('.', '/')}/mail/MailClient.kt", f"""package {p}.mail

import com.sendgrid.SendGrid
import org.springframework.beans.factory.annotation.Value
import org.springframework.stereotype.Service

@Service
class MailClient(
    @Value("\\${{sendgrid.api-key:{k}}}") private val apiKey: String,
    @Value("\\${{mail.from:no-reply@{p.split('.')[1]}.com}}") private val from: String,
) {{
    private val client = SendGrid(apiKey)

    fun sender(): String = from
    fun client(): SendGrid = client
}}
"""
    u, pp = user(), pw(kind="xml")
    return f"src/main/java/{p.replace('.', '/')}/ldap/LdapConfig.java", f"""package {p}.ldap;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.ldap.core.LdapTemplate;
import org.springframework.ldap.core.support.LdapContextSource;

@Configuration
public class LdapConfig {{

    @Bean
    public LdapContextSource contextSource(
            @Value("${{ldap.url:ldaps://dc01.corp.local:636}}") String url,
            @Value("${{ldap.base:dc=corp,dc=local}}") String base,
            @Value("${{ldap.manager-dn:cn={u},ou=service,dc=corp,dc=local}}") String managerDn,
            @Value("${{ldap.manager-password:{pp}}}") String managerPassword) {{
        LdapContextSource ctx = new LdapContextSource();
        ctx.setUrl(url);
        ctx.setBase(base);
        ctx.setUserDn(managerDn);
        ctx.setPassword(managerPassword);
        return ctx;
    }}

    @Bean
    public LdapTemplate ldapTemplate(LdapContextSource contextSource) {{
        return new LdapTemplate(contextSource);
    }}
}}
"""


@case("jdbc-url-inline-password", "secret", 4)
def _(v):
    h, u = host(), user()
    p = pw(kind="url")
    if v == 0:
        pk = pkg()
        return f"src/main/java/{pk.replace('.', '/')}/migration/LegacyImport.java", f"""package {pk}.migration;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

public final class LegacyImport {{

    private static final String LEGACY_URL =
        "jdbc:mysql://{h}:3306/legacy_crm?user={u}&password={p}&useSSL=false";

    public static void main(String[] args) throws SQLException {{
        try (Connection c = DriverManager.getConnection(LEGACY_URL);
             PreparedStatement ps = c.prepareStatement("SELECT id, email FROM customers WHERE migrated = 0");
             ResultSet rs = ps.executeQuery()) {{
            int n = 0;
            while (rs.next()) {{
                n++;
            }}
            System.out.printf("pending rows: %d%n", n);
        }}
    }}
}}
"""
    if v == 1:
        return "src/main/resources/META-INF/persistence.xml", f"""<?xml version="1.0" encoding="UTF-8"?>
<persistence xmlns="https://jakarta.ee/xml/ns/persistence" version="3.0">
  <persistence-unit name="reporting" transaction-type="RESOURCE_LOCAL">
    <provider>org.hibernate.jpa.HibernatePersistenceProvider</provider>
    <class>com.acme.reporting.model.DailySummary</class>
    <properties>
      <property name="jakarta.persistence.jdbc.driver" value="org.postgresql.Driver"/>
      <property name="jakarta.persistence.jdbc.url" value="jdbc:postgresql://{h}:5432/reporting"/>
      <property name="jakarta.persistence.jdbc.user" value="{u}"/>
      <property name="jakarta.persistence.jdbc.password" value="{pw(kind='xml')}"/>
      <property name="hibernate.hbm2ddl.auto" value="validate"/>
      <property name="hibernate.show_sql" value="false"/>
    </properties>
  </persistence-unit>
</persistence>
"""
    if v == 2:
        return "src/main/resources/db.properties", f"""# Connection pool for the batch importer (HikariCP DataSource properties)
dataSourceClassName=org.postgresql.ds.PGSimpleDataSource
jdbcUrl=jdbc:postgresql://{h}:5432/warehouse?user={u}&password={p}&ssl=true&sslmode=require
maximumPoolSize=8
minimumIdle=2
idleTimeout=600000
poolName=warehouse-import
"""
    return "src/main/resources/liquibase.properties", f"""changeLogFile=db/changelog/db.changelog-master.yaml
url=jdbc:sqlserver://{h}:1433;databaseName=Payments;user={u};password={pw(kind='url')};encrypt=true
driver=com.microsoft.sqlserver.jdbc.SQLServerDriver
liquibase.hub.mode=off
outputChangeLogFile=build/generated-changelog.xml
"""


@case("maven-settings-server-password", "secret", 4)
def _(v):
    u = pick("deploy", "ci-publisher", "jenkins", "release-bot", "acme-deployer")
    if v == 0:
        p = pw(kind="xml")
        return "settings.xml", f"""<?xml version="1.0" encoding="UTF-8"?>
<settings xmlns="http://maven.apache.org/SETTINGS/1.2.0"
          xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
          xsi:schemaLocation="http://maven.apache.org/SETTINGS/1.2.0 https://maven.apache.org/xsd/settings-1.2.0.xsd">
  <servers>
    <server>
      <id>nexus-releases</id>
      <username>{u}</username>
      <password>{p}</password>
    </server>
    <server>
      <id>nexus-snapshots</id>
      <username>{u}</username>
      <password>{p}</password>
    </server>
  </servers>
  <mirrors>
    <mirror>
      <id>nexus</id>
      <mirrorOf>*</mirrorOf>
      <url>https://nexus.corp.local/repository/maven-public/</url>
    </mirror>
  </mirrors>
</settings>
"""
    if v == 1:
        t = ghp()
        return ".mvn/settings.xml", f"""<settings>
  <activeProfiles>
    <activeProfile>github</activeProfile>
  </activeProfiles>
  <profiles>
    <profile>
      <id>github</id>
      <repositories>
        <repository>
          <id>github</id>
          <url>https://maven.pkg.github.com/acme-platform/*</url>
          <snapshots><enabled>true</enabled></snapshots>
        </repository>
      </repositories>
    </profile>
  </profiles>
  <servers>
    <server>
      <id>github</id>
      <username>acme-ci</username>
      <password>{t}</password>
    </server>
  </servers>
</settings>
"""
    if v == 2:
        pp = pw(kind="xml")
        return "ci/maven-settings.xml", f"""<settings>
  <servers>
    <server>
      <id>deploy-host</id>
      <username>mvnsite</username>
      <privateKey>${{user.home}}/.ssh/id_ed25519</privateKey>
      <passphrase>{pp}</passphrase>
      <filePermissions>664</filePermissions>
      <directoryPermissions>775</directoryPermissions>
    </server>
    <server>
      <id>ossrh</id>
      <username>${{env.OSSRH_USERNAME}}</username>
      <password>${{env.OSSRH_TOKEN}}</password>
    </server>
  </servers>
</settings>
"""
    tok = b64bytes(36)
    return "settings.xml", f"""<settings>
  <servers>
    <server>
      <id>artifactory</id>
      <configuration>
        <httpHeaders>
          <property>
            <name>X-JFrog-Art-Api</name>
            <value>AKCp8{rs(AN, 68)}</value>
          </property>
        </httpHeaders>
      </configuration>
    </server>
    <server>
      <id>central-portal</id>
      <username>{rs(AN, 8)}</username>
      <password>{tok}</password>
    </server>
  </servers>
</settings>
"""


@case("gradle-properties-publishing-credentials", "secret", 4)
def _(v):
    if v == 0:
        return "gradle.properties", f"""org.gradle.jvmargs=-Xmx4g -Dfile.encoding=UTF-8
org.gradle.parallel=true
org.gradle.caching=true
kotlin.code.style=official

# Sonatype OSSRH publishing
ossrhUsername={rs(AN, 8)}
ossrhPassword={rs(AN + '+/', 44)}
signing.keyId={HX(8)}
signing.password={pw()}
signing.secretKeyRingFile=/home/runner/.gnupg/secring.gpg
"""
    if v == 1:
        return "gradle.properties", f"""android.useAndroidX=true
android.nonTransitiveRClass=true
org.gradle.jvmargs=-Xmx2048m
# GitHub Packages
gpr.user=acme-ci
gpr.key={ghp()}
"""
    if v == 2:
        return "gradle.properties", f"""version=2.14.0-SNAPSHOT
group=io.northwind
artifactoryUrl=https://northwind.jfrog.io/artifactory
artifactoryUser=ci-publisher
artifactoryPassword=cmVmdGtuOjAxOjE3{b64bytes(45).rstrip('=')}
systemProp.http.proxyHost=proxy.corp.local
systemProp.http.proxyPort=3128
"""
    return "build.gradle.kts", f"""plugins {{
    `java-library`
    `maven-publish`
}}

group = "com.contoso"
version = "1.8.3"

java {{
    withSourcesJar()
    withJavadocJar()
}}

publishing {{
    publications {{
        create<MavenPublication>("maven") {{
            from(components["java"])
        }}
    }}
    repositories {{
        maven {{
            name = "internal"
            url = uri("https://nexus.contoso.net/repository/releases/")
            credentials {{
                username = "gradle-publisher"
                password = "{pw(kind='plain')}"
            }}
        }}
    }}
}}
"""


@case("android-signing-config-password", "secret", 4)
def _(v):
    sp, kp = pw(), pw()
    if v == 0:
        return "app/build.gradle", f"""plugins {{
    id 'com.android.application'
    id 'org.jetbrains.kotlin.android'
}}

android {{
    namespace 'com.tailspin.courier'
    compileSdk 34

    defaultConfig {{
        applicationId "com.tailspin.courier"
        minSdk 24
        targetSdk 34
        versionCode 412
        versionName "4.12.0"
    }}

    signingConfigs {{
        release {{
            storeFile file('../keystore/courier-release.jks')
            storePassword '{sp}'
            keyAlias 'courier'
            keyPassword '{kp}'
        }}
    }}

    buildTypes {{
        release {{
            minifyEnabled true
            signingConfig signingConfigs.release
            proguardFiles getDefaultProguardFile('proguard-android-optimize.txt'), 'proguard-rules.pro'
        }}
    }}
}}
"""
    if v == 1:
        return "app/build.gradle.kts", f"""android {{
    namespace = "io.lumen.wallet"
    compileSdk = 34

    signingConfigs {{
        create("release") {{
            storeFile = rootProject.file("signing/release.keystore")
            storePassword = "{sp}"
            keyAlias = "lumen-release"
            keyPassword = "{sp}"
            enableV3Signing = true
        }}
    }}
    buildTypes {{
        getByName("release") {{
            isMinifyEnabled = true
            signingConfig = signingConfigs.getByName("release")
        }}
    }}
}}
"""
    if v == 2:
        return "keystore.properties", f"""storeFile=../signing/upload-keystore.jks
storePassword={sp}
keyAlias=upload
keyPassword={kp}
"""
    return "app/build.gradle", f"""android {{
    buildTypes {{
        debug {{
            applicationIdSuffix ".debug"
        }}
        release {{
            minifyEnabled true
            buildConfigField "String", "API_BASE_URL", '"https://api.wingtip.io/v2/"'
            buildConfigField "String", "ALGOLIA_ADMIN_KEY", '"{hx(32)}"'
            buildConfigField "String", "ALGOLIA_APP_ID", '"{rs(UP + DG, 10)}"'
        }}
    }}
}}
"""


@case("android-resource-backend-key", "secret", 3)
def _(v):
    if v == 0:
        return "app/src/main/res/values/secrets.xml", f"""<?xml version="1.0" encoding="utf-8"?>
<resources>
    <string name="app_name" translatable="false">Courier</string>
    <string name="twilio_account_sid" translatable="false">{twilio_sid()}</string>
    <string name="twilio_auth_token" translatable="false">{hx(32)}</string>
    <string name="support_phone" translatable="false">+1 555 0134</string>
</resources>
"""
    if v == 1:
        return "app/src/main/res/values/config.xml", f"""<?xml version="1.0" encoding="utf-8"?>
<resources>
    <bool name="enable_crash_reporting">true</bool>
    <integer name="sync_interval_minutes">15</integer>
    <string name="backend_base_url">https://api.fabrikam.app/</string>
    <!-- used by UploadWorker to push to S3 directly -->
    <string name="s3_access_key_id">{aws_akid()}</string>
    <string name="s3_secret_access_key">{aws_secret()}</string>
    <string name="s3_bucket">fabrikam-user-uploads</string>
</resources>
"""
    return "app/src/main/java/com/globex/chat/net/ApiModule.kt", f"""package com.globex.chat.net

import okhttp3.Interceptor
import okhttp3.OkHttpClient
import retrofit2.Retrofit
import retrofit2.converter.moshi.MoshiConverterFactory

object ApiModule {{
    private const val BASE_URL = "https://api.globex-chat.com/"
    private const val SERVICE_TOKEN = "{jwt({'sub': 'svc-mobile-gateway', 'iss': 'https://auth.globex-chat.com', 'scope': 'messages:write users:read', 'iat': 1719830400})}"

    private val authInterceptor = Interceptor {{ chain ->
        val req = chain.request().newBuilder()
            .header("Authorization", "Bearer $SERVICE_TOKEN")
            .build()
        chain.proceed(req)
    }}

    val retrofit: Retrofit = Retrofit.Builder()
        .baseUrl(BASE_URL)
        .client(OkHttpClient.Builder().addInterceptor(authInterceptor).build())
        .addConverterFactory(MoshiConverterFactory.create())
        .build()
}}
"""


@case("logback-appender-credential", "secret", 4)
def _(v):
    if v == 0:
        return "src/main/resources/logback-spring.xml", f"""<configuration>
  <include resource="org/springframework/boot/logging/logback/defaults.xml"/>
  <appender name="CONSOLE" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>${{CONSOLE_LOG_PATTERN}}</pattern></encoder>
  </appender>

  <appender name="EMAIL" class="ch.qos.logback.classic.net.SMTPAppender">
    <smtpHost>smtp.sendgrid.net</smtpHost>
    <smtpPort>587</smtpPort>
    <STARTTLS>true</STARTTLS>
    <username>apikey</username>
    <password>{sendgrid()}</password>
    <to>oncall@northwind.io</to>
    <from>alerts@northwind.io</from>
    <subject>[%property{{HOSTNAME}}] %logger{{20}} - %m</subject>
    <layout class="ch.qos.logback.classic.PatternLayout">
      <pattern>%date %-5level %logger{{35}} - %message%n</pattern>
    </layout>
  </appender>

  <root level="INFO">
    <appender-ref ref="CONSOLE"/>
    <appender-ref ref="EMAIL"/>
  </root>
</configuration>
"""
    if v == 1:
        return "src/main/resources/logback.xml", f"""<configuration>
  <appender name="SLACK" class="com.github.maricn.logback.SlackAppender">
    <webhookUri>{slack_hook()}</webhookUri>
    <channel>#payments-alerts</channel>
    <username>payments-gateway</username>
    <iconEmoji>:rotating_light:</iconEmoji>
    <layout class="ch.qos.logback.classic.PatternLayout">
      <pattern>%-4relative [%thread] %-5level %class - %msg%n</pattern>
    </layout>
  </appender>
  <appender name="ASYNC_SLACK" class="ch.qos.logback.classic.AsyncAppender">
    <appender-ref ref="SLACK"/>
    <filter class="ch.qos.logback.classic.filter.ThresholdFilter">
      <level>ERROR</level>
    </filter>
  </appender>
  <root level="INFO">
    <appender-ref ref="ASYNC_SLACK"/>
  </root>
</configuration>
"""
    if v == 2:
        return "src/main/resources/logback.xml", f"""<configuration>
  <appender name="LOGZIO" class="io.logz.logback.LogzioLogbackAppender">
    <token>{rs(LO, 32)}</token>
    <logzioUrl>https://listener-eu.logz.io:8071</logzioUrl>
    <logzioType>java</logzioType>
    <addHostname>true</addHostname>
    <additionalFields>service=shipping-service;env=prod</additionalFields>
  </appender>
  <root level="INFO">
    <appender-ref ref="LOGZIO"/>
  </root>
</configuration>
"""
    return "src/main/resources/logback.xml", f"""<configuration debug="false">
  <appender name="DATADOG" class="net.logstash.logback.appender.LogstashTcpSocketAppender">
    <destination>intake.logs.datadoghq.eu:443</destination>
    <ssl/>
    <encoder class="net.logstash.logback.encoder.LogstashEncoder">
      <prefix class="ch.qos.logback.core.encoder.LayoutWrappingEncoder">
        <layout class="ch.qos.logback.classic.PatternLayout">
          <pattern>{datadog_api()} %mdc{{keyThatDoesNotExist}}</pattern>
        </layout>
      </prefix>
      <customFields>{{"service":"pricing-engine","ddsource":"java"}}</customFields>
    </encoder>
  </appender>
  <root level="INFO"><appender-ref ref="DATADOG"/></root>
</configuration>
"""


@case("log4j-appender-credential", "secret", 3)
def _(v):
    if v == 0:
        return "src/main/resources/log4j2.xml", f"""<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="WARN">
  <Appenders>
    <Console name="Console" target="SYSTEM_OUT">
      <PatternLayout pattern="%d{{ISO8601}} %-5p [%t] %c{{1.}} - %m%n"/>
    </Console>
    <SMTP name="Mail" subject="ledger-api error" to="ops@wingtip.net" from="ledger@wingtip.net"
          smtpHost="email-smtp.eu-west-1.amazonaws.com" smtpPort="587" smtpProtocol="smtp"
          smtpUsername="{aws_akid()}" smtpPassword="BA{rs(B64, 42)}" bufferSize="50">
      <ThresholdFilter level="ERROR" onMatch="ACCEPT" onMismatch="DENY"/>
    </SMTP>
  </Appenders>
  <Loggers>
    <Root level="info">
      <AppenderRef ref="Console"/>
      <AppenderRef ref="Mail"/>
    </Root>
  </Loggers>
</Configuration>
"""
    if v == 1:
        return "src/main/resources/log4j.properties", f"""log4j.rootLogger=INFO, stdout, DB
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=%d %-5p %c - %m%n

log4j.appender.DB=org.apache.log4j.jdbc.JDBCAppender
log4j.appender.DB.URL=jdbc:mysql://{host()}:3306/audit
log4j.appender.DB.driver=com.mysql.cj.jdbc.Driver
log4j.appender.DB.user=audit_writer
log4j.appender.DB.password={pw()}
log4j.appender.DB.sql=INSERT INTO audit_log (ts, level, logger, msg) VALUES ('%d', '%p', '%c', '%m')
log4j.appender.DB.layout=org.apache.log4j.PatternLayout
"""
    return "src/main/resources/log4j2.yaml", f"""Configuration:
  status: warn
  Appenders:
    Console:
      name: Console
      PatternLayout:
        Pattern: "%d %p %c{{1.}} [%t] %m%n"
    Http:
      name: NewRelic
      url: https://log-api.newrelic.com/log/v1
      Property:
        - name: Api-Key
          value: {newrelic_license()}
        - name: Content-Type
          value: application/json
      JsonLayout:
        compact: true
        eventEol: true
  Loggers:
    Root:
      level: info
      AppenderRef:
        - ref: Console
        - ref: NewRelic
"""

@case("java-aws-static-credentials", "secret", 4)
def _(v):
    p = pkg()
    pp = p.replace(".", "/")
    if v == 0:
        return f"src/main/java/{pp}/storage/S3ClientFactory.java", f"""package {p}.storage;

import com.amazonaws.auth.AWSStaticCredentialsProvider;
import com.amazonaws.auth.BasicAWSCredentials;
import com.amazonaws.regions.Regions;
import com.amazonaws.services.s3.AmazonS3;
import com.amazonaws.services.s3.AmazonS3ClientBuilder;

public final class S3ClientFactory {{

    private S3ClientFactory() {{ }}

    public static AmazonS3 create() {{
        BasicAWSCredentials creds = new BasicAWSCredentials(
                "{aws_akid()}",
                "{aws_secret()}");
        return AmazonS3ClientBuilder.standard()
                .withRegion(Regions.EU_CENTRAL_1)
                .withCredentials(new AWSStaticCredentialsProvider(creds))
                .build();
    }}
}}
"""
    if v == 1:
        return f"src/main/kotlin/{pp}/queue/SqsConfig.kt", f"""package {p}.queue

import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Configuration
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.sqs.SqsAsyncClient

@Configuration
class SqsConfig {{

    @Bean
    fun sqsClient(): SqsAsyncClient = SqsAsyncClient.builder()
        .region(Region.US_EAST_2)
        .credentialsProvider(
            StaticCredentialsProvider.create(
                AwsBasicCredentials.create("{aws_akid()}", "{aws_secret()}")
            )
        )
        .build()
}}
"""
    if v == 2:
        return "src/main/resources/application.yml", f"""spring:
  cloud:
    aws:
      region:
        static: eu-west-1
      credentials:
        access-key: {aws_akid()}
        secret-key: {aws_secret()}
      s3:
        path-style-access-enabled: false
      sqs:
        endpoint: https://sqs.eu-west-1.amazonaws.com

app:
  uploads:
    bucket: northwind-invoices-prod
    presign-ttl: 15m
"""
    # access key id alone, in a test
    return f"src/test/java/{pp}/storage/PresignerTest.java", f"""package {p}.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URL;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class PresignerTest {{

    private static final String ACCESS_KEY_ID = "{aws_akid()}";

    @Test
    void presignedUrlContainsCredentialScope() {{
        Presigner presigner = new Presigner("invoices-prod", "eu-west-1", ACCESS_KEY_ID);
        URL url = presigner.presignGet("2024/06/INV-10442.pdf", Duration.ofMinutes(10));
        assertThat(url.getQuery()).contains("X-Amz-Credential=" + ACCESS_KEY_ID);
        assertThat(url.getQuery()).contains("X-Amz-Expires=600");
    }}
}}
"""


@case("java-char-byte-array-secret", "secret", 4)
def _(v):
    p = pkg()
    pp = p.replace(".", "/")
    if v == 0:
        key = rbytes(32)
        arr = ", ".join("(byte) 0x%02x" % b if b > 127 else "0x%02x" % b for b in key)
        lines = []
        parts = arr.split(", ")
        for i in range(0, 32, 8):
            lines.append("        " + ", ".join(parts[i:i + 8]) + ",")
        body = "\n".join(lines).rstrip(",")
        return f"src/main/java/{pp}/crypto/FieldEncryptor.java", f"""package {p}.crypto;

import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/** Encrypts PII columns before they are written to the ledger table. */
public final class FieldEncryptor {{

    private static final byte[] KEY = new byte[] {{
{body}
    }};

    private static final SecureRandom RNG = new SecureRandom();

    public static byte[] encrypt(byte[] plain) throws GeneralSecurityException {{
        byte[] iv = new byte[12];
        RNG.nextBytes(iv);
        Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
        c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(KEY, "AES"), new GCMParameterSpec(128, iv));
        byte[] out = c.doFinal(plain);
        byte[] res = new byte[iv.length + out.length];
        System.arraycopy(iv, 0, res, 0, iv.length);
        System.arraycopy(out, 0, res, iv.length, out.length);
        return res;
    }}
}}
"""
    if v == 1:
        p1 = pw(kind="plain", n=16)
        chars = ", ".join("'%s'" % c for c in p1)
        return f"src/main/java/{pp}/ssl/TrustStoreLoader.java", f"""package {p}.ssl;

import java.io.InputStream;
import java.security.KeyStore;
import javax.net.ssl.TrustManagerFactory;

public class TrustStoreLoader {{

    // kept as char[] so it never lands in the string pool
    private static final char[] STORE_PASS = {{ {chars} }};

    public TrustManagerFactory load() throws Exception {{
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = getClass().getResourceAsStream("/certs/partner-truststore.p12")) {{
            ks.load(in, STORE_PASS);
        }}
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        return tmf;
    }}
}}
"""
    if v == 2:
        k = stripe_sk()
        n3 = len(k) // 3
        a, b, c = k[:n3], k[n3:2 * n3], k[2 * n3:]
        return f"src/main/java/{pp}/billing/BillingDefaults.java", f"""package {p}.billing;

final class BillingDefaults {{

    static final String API_VERSION = "2024-06-20";
    static final int MAX_RETRIES = 3;

    // split so the line stays under 120 chars
    static final String SECRET_KEY = "{a}"
            + "{b}"
            + "{c}";

    private BillingDefaults() {{ }}
}}
"""
    hexkey = hx(64)
    return f"src/main/kotlin/{pp}/webhook/SignatureVerifier.kt", f"""package {p}.webhook

import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

object SignatureVerifier {{
    private val signingKey: ByteArray =
        "{hexkey}"
            .chunked(2)
            .map {{ it.toInt(16).toByte() }}
            .toByteArray()

    fun verify(payload: ByteArray, signatureHex: String): Boolean {{
        val mac = Mac.getInstance("HmacSHA256")
        mac.init(SecretKeySpec(signingKey, "HmacSHA256"))
        val expected = mac.doFinal(payload).joinToString("") {{ "%02x".format(it) }}
        return java.security.MessageDigest.isEqual(expected.toByteArray(), signatureHex.toByteArray())
    }}
}}
"""


@case("spring-oauth2-client-secret", "secret", 4)
def _(v):
    if v == 0:
        return "src/main/resources/application.yml", f"""spring:
  security:
    oauth2:
      client:
        registration:
          google:
            client-id: {digits(12)}-{rs(LO + DG, 32)}.apps.googleusercontent.com
            client-secret: GOCSPX-{rs(URLSAFE, 28)}
            scope: openid,profile,email
          github:
            client-id: Ov23li{rs(AN, 14)}
            client-secret: {hx(40)}
        provider:
          github:
            user-name-attribute: login
"""
    if v == 1:
        return "src/main/resources/application-prod.properties", f"""spring.security.oauth2.client.registration.okta.client-id=0oa{rs(AN, 17)}
spring.security.oauth2.client.registration.okta.client-secret={rs(URLSAFE, 40)}
spring.security.oauth2.client.registration.okta.scope=openid,profile,email,groups
spring.security.oauth2.client.provider.okta.issuer-uri=https://northwind.okta.com/oauth2/default
server.forward-headers-strategy=framework
"""
    if v == 2:
        return "src/main/resources/application.yml", f"""spring:
  security:
    oauth2:
      client:
        registration:
          keycloak:
            client-id: orders-backend
            client-secret: {rs(AN, 32)}
            authorization-grant-type: client_credentials
            scope: orders.read,orders.write
        provider:
          keycloak:
            token-uri: https://sso.acme.internal/realms/platform/protocol/openid-connect/token
      resourceserver:
        jwt:
          issuer-uri: https://sso.acme.internal/realms/platform
"""
    sec = azure_ad_secret()
    return "src/main/resources/application.properties", f"""spring.cloud.azure.active-directory.enabled=true
spring.cloud.azure.active-directory.profile.tenant-id={uuid4()}
spring.cloud.azure.active-directory.credential.client-id={uuid4()}
spring.cloud.azure.active-directory.credential.client-secret={sec}
spring.cloud.azure.active-directory.app-id-uri=api://crm-sync
spring.cloud.azure.active-directory.authorization-clients.graph.scopes=https://graph.microsoft.com/User.Read
"""


@case("kafka-jaas-sasl-password", "secret", 4)
def _(v):
    k, s = confluent_key(), confluent_secret()
    if v == 0:
        return "src/main/resources/application.yml", f"""spring:
  kafka:
    bootstrap-servers: pkc-{rs(LO + DG, 5)}.eu-west-1.aws.confluent.cloud:9092
    properties:
      security.protocol: SASL_SSL
      sasl.mechanism: PLAIN
      sasl.jaas.config: org.apache.kafka.common.security.plain.PlainLoginModule required username="{k}" password="{s}";
      session.timeout.ms: 45000
    consumer:
      group-id: shipping-service
      auto-offset-reset: earliest
    producer:
      acks: all
"""
    if v == 1:
        return "config/kafka-client.properties", f"""bootstrap.servers=kafka-1.prod.lan:9094,kafka-2.prod.lan:9094,kafka-3.prod.lan:9094
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
    username="ledger-api" \\
    password="{pw(kind='plain')}";
ssl.truststore.location=/etc/kafka/secrets/truststore.jks
ssl.endpoint.identification.algorithm=https
"""
    if v == 2:
        return "src/main/java/com/globex/crm/events/KafkaProps.java", f"""package com.globex.crm.events;

import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.common.config.SaslConfigs;

final class KafkaProps {{

    static Properties producer() {{
        Properties p = new Properties();
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "pkc-{rs(LO + DG, 5)}.us-east-2.aws.confluent.cloud:9092");
        p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_SSL");
        p.put(SaslConfigs.SASL_MECHANISM, "PLAIN");
        p.put(SaslConfigs.SASL_JAAS_CONFIG, String.format(
            "org.apache.kafka.common.security.plain.PlainLoginModule required username=\\"%s\\" password=\\"%s\\";",
            "{k}", "{s}"));
        p.put("acks", "all");
        return p;
    }}

    private KafkaProps() {{ }}
}}
"""
    return "src/main/resources/kafka_client_jaas.conf", f"""KafkaClient {{
    org.apache.kafka.common.security.scram.ScramLoginModule required
    username="inventory-svc"
    password="{pw(kind='plain')}";
}};
"""


@case("private-key-pem-in-repo", "secret", 4)
def _(v):
    if v == 0:
        return "src/main/resources/keys/jwt-signing.pem", pem_private("pkcs8")
    if v == 1:
        k = pem_private("rsa").rstrip("\n").replace("\n", "\n        ")
        return "src/main/resources/application-dev.yml", f"""app:
  saml:
    entity-id: https://crm.globex.com/saml/metadata
    signing:
      key-alias: crm-sp
      private-key: |
        {k}
  jwt:
    issuer: https://crm.globex.com
"""
    if v == 2:
        k = pem_private("ec")
        return "internal/auth/testdata_keys.go", f"""package auth

// signingKeyPEM is the ES256 key used by the token service.
const signingKeyPEM = `{k}`

var defaultKID = "{hx(16)}"
"""
    k = pem_private("pkcs8")
    return "src/test/resources/keys/service-account.pem", k


@case("basic-auth-header-base64", "secret", 3)
def _(v):
    u = user()
    p = pw(kind="plain")
    enc = base64.b64encode(f"{u}:{p}".encode()).decode()
    if v == 0:
        return "src/main/java/com/fabrikam/catalog/erp/ErpClient.java", f"""package com.fabrikam.catalog.erp;

import org.springframework.http.HttpHeaders;
import org.springframework.web.reactive.function.client.WebClient;

public class ErpClient {{

    private final WebClient client = WebClient.builder()
            .baseUrl("https://erp.fabrikam.local/odata/v4")
            .defaultHeader(HttpHeaders.AUTHORIZATION, "Basic {enc}")
            .defaultHeader(HttpHeaders.ACCEPT, "application/json")
            .build();

    public WebClient client() {{
        return client;
    }}
}}
"""
    if v == 1:
        return "internal/partner/client.go", f"""package partner

import (
\t"net/http"
\t"time"
)

const (
\tbaseURL    = "https://partner-api.wingtip.net/v1"
\tauthHeader = "Basic {enc}"
)

type Client struct {{
\thttp *http.Client
}}

func New() *Client {{
\treturn &Client{{http: &http.Client{{Timeout: 10 * time.Second}}}}
}}

func (c *Client) do(req *http.Request) (*http.Response, error) {{
\treq.Header.Set("Authorization", authHeader)
\treq.Header.Set("Accept", "application/json")
\treturn c.http.Do(req)
}}
"""
    return "src/Contoso.Integrations/Sap/SapHttpClientFactory.cs", f"""using System.Net.Http.Headers;

namespace Contoso.Integrations.Sap;

public static class SapHttpClientFactory
{{
    private const string Credentials = "{enc}";

    public static HttpClient Create()
    {{
        var client = new HttpClient {{ BaseAddress = new Uri("https://sap-gw.contoso.net/sap/opu/odata/sap/") }};
        client.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Basic", Credentials);
        client.DefaultRequestHeaders.Accept.Add(new MediaTypeWithQualityHeaderValue("application/json"));
        return client;
    }}
}}
"""


@case("spring-third-party-api-keys", "secret", 4)
def _(v):
    if v == 0:
        return "src/main/resources/application.properties", f"""spring.application.name=support-assistant
spring.ai.openai.api-key={openai_key()}
spring.ai.openai.chat.options.model=gpt-4o-mini
spring.ai.openai.chat.options.temperature=0.2
spring.threads.virtual.enabled=true
"""
    if v == 1:
        return "src/main/resources/application.yml", f"""twilio:
  account-sid: {twilio_sid()}
  auth-token: {hx(32)}
  messaging-service-sid: MG{hx(32)}
  status-callback: https://notify.tailspin.io/twilio/status

notifications:
  sms:
    enabled: true
    rate-limit-per-minute: 120
"""
    if v == 2:
        return "src/main/resources/application-prod.yml", f"""stripe:
  secret-key: {stripe_sk('rk')}
  webhook-secret: {whsec()}
  publishable-key: {stripe_pk()}

billing:
  currency: eur
  trial-days: 14
"""
    return "src/main/resources/application.yml", f"""github:
  app:
    id: {R.randint(100000, 999999)}
    installation-id: {R.randint(10000000, 99999999)}
  api-url: https://api.github.com
  token: {gh_fine()}

slack:
  bot-token: {slack_bot()}
  default-channel: C{rs(UP + DG, 10)}
"""


@case("config-encryption-master-key-literal", "secret", 3)
def _(v):
    if v == 0:
        return "src/main/resources/bootstrap.yml", f"""spring:
  application:
    name: config-server
  cloud:
    config:
      server:
        git:
          uri: https://git.acme.internal/platform/config-repo.git
          default-label: main
encrypt:
  key: {rs(AN, 40)}
"""
    if v == 1:
        return "src/main/resources/application.properties", f"""jasypt.encryptor.password={pw(kind='plain')}
jasypt.encryptor.algorithm=PBEWITHHMACSHA512ANDAES_256
jasypt.encryptor.iv-generator-classname=org.jasypt.iv.RandomIvGenerator
spring.datasource.url=jdbc:postgresql://{host()}:5432/ledger
spring.datasource.username=ledger_app
spring.datasource.password=ENC({b64bytes(48)})
"""
    return "src/main/resources/application.yml", f"""spring:
  cloud:
    config:
      uri: https://config.northwind.internal
      username: config-client
      password: {pw()}
      fail-fast: true
  application:
    name: pricing-engine
"""


@case("credential-in-code-comment", "secret", 3)
def _(v):
    if v == 0:
        u = user()
        p = pw()
        return "src/main/java/com/tailspin/notify/config/SmtpConfig.java", f"""package com.tailspin.notify.config;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * SMTP relay settings.
 *
 * <p>Relay account on mail.tailspin.io: user {u} / pass {p}
 * (ops rotates quarterly; ask #infra if login fails).
 */
@ConfigurationProperties(prefix = "notify.smtp")
public record SmtpConfig(String host, int port, String username, String password, boolean starttls) {{
}}
"""
    if v == 1:
        return "internal/store/postgres.go", f"""package store

import (
\t"context"

\t"github.com/jackc/pgx/v5/pgxpool"
)

// NewPool opens the connection pool.
// local: postgres://ledger:{pw(kind='url')}@pg-primary.svc.cluster.local:5432/ledger?sslmode=require
func NewPool(ctx context.Context, dsn string) (*pgxpool.Pool, error) {{
\tcfg, err := pgxpool.ParseConfig(dsn)
\tif err != nil {{
\t\treturn nil, err
\t}}
\tcfg.MaxConns = 16
\treturn pgxpool.NewWithConfig(ctx, cfg)
}}
"""
    return "src/main/resources/application.properties", f"""server.port=8443
spring.datasource.url=jdbc:postgresql://localhost:5432/orders
spring.datasource.username=${{DB_USER}}
spring.datasource.password=${{DB_PASSWORD}}
# temporary until vault agent is rolled out:
# spring.datasource.password={pw()}
spring.jpa.open-in-view=false
"""


@case("nosql-cache-uri-password", "secret", 4)
def _(v):
    if v == 0:
        return "src/main/resources/application.yml", f"""spring:
  data:
    mongodb:
      uri: mongodb+srv://{user()}:{pw(kind='url')}@cluster0.{rs(LO + DG, 5)}.mongodb.net/catalog?retryWrites=true&w=majority
      auto-index-creation: false
"""
    if v == 1:
        return "src/main/resources/application.properties", f"""spring.data.redis.url=rediss://default:{rs(AN, 32)}@redis-{R.randint(10000, 19999)}.c{R.randint(100, 300)}.eu-west-1-2.ec2.redns.redis-cloud.com:{R.randint(10000, 19999)}
spring.cache.type=redis
spring.cache.redis.time-to-live=10m
"""
    if v == 2:
        return "config/config.toml", f"""[server]
addr = ":8080"
read_timeout = "5s"

[cache]
url = "redis://:{pw(kind='url')}@cache.prod.lan:6379/2"
pool_size = 20

[search]
urls = ["https://elastic:{pw(kind='url')}@es-01.prod.lan:9200"]
index_prefix = "catalog"
"""
    return "src/main/resources/application.conf", f"""cassandra {{
  contact-points = ["cass-1.prod.lan:9042", "cass-2.prod.lan:9042"]
  local-datacenter = "dc1"
  keyspace = "events"
  auth {{
    username = "events_rw"
    password = "{pw()}"
  }}
}}
"""

# =========================================================================
# .NET -- secrets
# =========================================================================
@case("dotnet-appsettings-connection-password", "secret", 4)
def _(v):
    h, u, p = host(), user(), pw(kind="conn")
    if v == 0:
        return "src/Orders.Api/appsettings.Production.json", f"""{{
  "Logging": {{
    "LogLevel": {{
      "Default": "Information",
      "Microsoft.AspNetCore": "Warning"
    }}
  }},
  "AllowedHosts": "*",
  "ConnectionStrings": {{
    "OrdersDb": "Server=tcp:{h},1433;Initial Catalog=Orders;User ID={u};Password={p};Encrypt=True;TrustServerCertificate=False;Connection Timeout=30;"
  }},
  "Outbox": {{
    "PollingIntervalSeconds": 5,
    "BatchSize": 100
  }}
}}
"""
    if v == 1:
        return "src/Billing.Worker/appsettings.json", f"""{{
  "ConnectionStrings": {{
    "Postgres": "Host={h};Port=5432;Database=billing;Username={u};Password={p};SSL Mode=Require;Trust Server Certificate=true",
    "Redis": "redis.prod.lan:6379,password={pw(kind='plain')},ssl=True,abortConnect=False"
  }},
  "Hangfire": {{
    "WorkerCount": 4,
    "Queues": [ "default", "invoices" ]
  }},
  "Serilog": {{
    "MinimumLevel": "Information"
  }}
}}
"""
    if v == 2:
        return "src/Inventory.Api/appsettings.Staging.json", f"""{{
  "Database": {{
    "Provider": "MySql",
    "ConnectionString": "server={h};port=3306;database=inventory;uid={u};pwd={p};SslMode=Required"
  }},
  "RabbitMq": {{
    "Host": "rabbit.staging.lan",
    "VirtualHost": "/inventory",
    "Username": "inventory",
    "Password": "{pw()}"
  }},
  "FeatureManagement": {{
    "BulkImport": true
  }}
}}
"""
    return "src/Crm.Sync/appsettings.json", f"""{{
  "Smtp": {{
    "Host": "smtp.office365.com",
    "Port": 587,
    "EnableSsl": true,
    "UserName": "crm-notify@globex.com",
    "Password": "{pw()}",
    "From": "CRM <crm-notify@globex.com>"
  }},
  "Sync": {{
    "Cron": "*/15 * * * *",
    "PageSize": 500
  }}
}}
"""


@case("webconfig-connection-string-password", "secret", 4)
def _(v):
    h, u, p = host(), user(), pw(kind="xml")
    if v == 0:
        return "Web.config", f"""<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <connectionStrings>
    <add name="DefaultConnection"
         connectionString="Data Source={h};Initial Catalog=Portal;User Id={u};Password={p};MultipleActiveResultSets=True"
         providerName="System.Data.SqlClient" />
  </connectionStrings>
  <appSettings>
    <add key="webpages:Version" value="3.0.0.0" />
    <add key="ClientValidationEnabled" value="true" />
    <add key="UnobtrusiveJavaScriptEnabled" value="true" />
  </appSettings>
  <system.web>
    <compilation debug="false" targetFramework="4.8" />
    <httpRuntime targetFramework="4.8" />
  </system.web>
</configuration>
"""
    if v == 1:
        return "src/LegacyPortal/Web.config", f"""<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <appSettings>
    <add key="PaymentProvider" value="Stripe" />
    <add key="StripeSecretKey" value="{stripe_sk()}" />
    <add key="StripeApiVersion" value="2023-10-16" />
    <add key="SupportEmail" value="support@wingtip.net" />
  </appSettings>
  <system.web>
    <compilation debug="false" targetFramework="4.7.2" />
    <customErrors mode="RemoteOnly" defaultRedirect="~/Error" />
  </system.web>
</configuration>
"""
    if v == 2:
        return "src/Intranet/Web.config", f"""<?xml version="1.0"?>
<configuration>
  <system.web>
    <compilation targetFramework="4.8" />
    <authentication mode="Forms">
      <forms loginUrl="~/Account/Login" timeout="2880" />
    </authentication>
    <machineKey validationKey="{HX(128)}"
                decryptionKey="{HX(64)}"
                validation="HMACSHA256" decryption="AES" />
  </system.web>
</configuration>
"""
    return "src/Batch.Exporter/App.config", f"""<?xml version="1.0" encoding="utf-8" ?>
<configuration>
  <startup>
    <supportedRuntime version="v4.0" sku=".NETFramework,Version=v4.8" />
  </startup>
  <connectionStrings>
    <add name="Warehouse" connectionString="Provider=OraOLEDB.Oracle;Data Source={h}:1521/WHPROD;User Id={u.upper()};Password={p};" />
  </connectionStrings>
  <appSettings>
    <add key="ExportPath" value="\\\\fileserver01\\exports\\daily" />
    <add key="SftpHost" value="sftp.partner.example.com" />
    <add key="SftpUser" value="acme_upload" />
    <add key="SftpPassword" value="{pw(kind='xml')}" />
  </appSettings>
</configuration>
"""


@case("csharp-hardcoded-signing-key", "secret", 4)
def _(v):
    if v == 0:
        k = b64bytes(48)
        return "src/Identity.Api/Auth/TokenService.cs", f"""using System.IdentityModel.Tokens.Jwt;
using System.Security.Claims;
using System.Text;
using Microsoft.IdentityModel.Tokens;

namespace Identity.Api.Auth;

public sealed class TokenService
{{
    private const string Issuer = "https://identity.northwind.io";
    private const string Audience = "northwind-api";
    private static readonly SymmetricSecurityKey SigningKey =
        new(Encoding.UTF8.GetBytes("{k}"));

    public string Issue(string userId, IEnumerable<string> roles)
    {{
        var claims = new List<Claim> {{ new(JwtRegisteredClaimNames.Sub, userId) }};
        claims.AddRange(roles.Select(r => new Claim(ClaimTypes.Role, r)));
        var token = new JwtSecurityToken(
            issuer: Issuer,
            audience: Audience,
            claims: claims,
            expires: DateTime.UtcNow.AddHours(1),
            signingCredentials: new SigningCredentials(SigningKey, SecurityAlgorithms.HmacSha256));
        return new JwtSecurityTokenHandler().WriteToken(token);
    }}
}}
"""
    if v == 1:
        g = uuid4().upper()
        return "src/IdentityServer/Config.cs", f"""using Duende.IdentityServer.Models;

namespace IdentityServer;

public static class Config
{{
    public static IEnumerable<ApiScope> ApiScopes => new[]
    {{
        new ApiScope("orders.read"),
        new ApiScope("orders.write"),
    }};

    public static IEnumerable<Client> Clients => new[]
    {{
        new Client
        {{
            ClientId = "orders-worker",
            AllowedGrantTypes = GrantTypes.ClientCredentials,
            ClientSecrets = {{ new Secret("{g}".Sha256()) }},
            AllowedScopes = {{ "orders.read", "orders.write" }},
        }},
        new Client
        {{
            ClientId = "spa",
            AllowedGrantTypes = GrantTypes.Code,
            RequireClientSecret = false,
            RedirectUris = {{ "https://app.northwind.io/callback" }},
            AllowedScopes = {{ "openid", "profile", "orders.read" }},
        }},
    }};
}}
"""
    if v == 2:
        key = hx(64)
        return "src/Webhooks/Signing/HmacValidator.cs", f"""using System.Security.Cryptography;
using System.Text;

namespace Webhooks.Signing;

internal static class HmacValidator
{{
    private static readonly byte[] Secret = Convert.FromHexString("{key}");

    public static bool IsValid(string body, string signature)
    {{
        using var hmac = new HMACSHA256(Secret);
        var computed = Convert.ToHexString(hmac.ComputeHash(Encoding.UTF8.GetBytes(body))).ToLowerInvariant();
        return CryptographicOperations.FixedTimeEquals(
            Encoding.ASCII.GetBytes(computed),
            Encoding.ASCII.GetBytes(signature));
    }}
}}
"""
    sk = sendgrid()
    return "src/Notifications/EmailSender.cs", f"""using SendGrid;
using SendGrid.Helpers.Mail;

namespace Notifications;

public class EmailSender : IEmailSender
{{
    private readonly SendGridClient _client = new SendGridClient(new SendGridClientOptions
    {{
        ApiKey = "{sk}",
        HttpErrorAsException = true,
    }});

    public async Task SendAsync(string to, string subject, string html)
    {{
        var msg = MailHelper.CreateSingleEmail(new EmailAddress("no-reply@contoso.com", "Contoso"),
            new EmailAddress(to), subject, null, html);
        await _client.SendEmailAsync(msg);
    }}
}}
"""


@case("nuget-config-cleartext-password", "secret", 3)
def _(v):
    if v == 0:
        return "NuGet.config", f"""<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <clear />
    <add key="nuget.org" value="https://api.nuget.org/v3/index.json" protocolVersion="3" />
    <add key="github" value="https://nuget.pkg.github.com/contoso/index.json" />
  </packageSources>
  <packageSourceCredentials>
    <github>
      <add key="Username" value="contoso-ci" />
      <add key="ClearTextPassword" value="{ghp()}" />
    </github>
  </packageSourceCredentials>
</configuration>
"""
    if v == 1:
        return "nuget.config", f"""<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <add key="AzureArtifacts" value="https://pkgs.dev.azure.com/fabrikam/_packaging/internal/nuget/v3/index.json" />
  </packageSources>
  <packageSourceCredentials>
    <AzureArtifacts>
      <add key="Username" value="az" />
      <add key="ClearTextPassword" value="{rs(LO + DG, 52)}" />
    </AzureArtifacts>
  </packageSourceCredentials>
  <packageSourceMapping>
    <packageSource key="AzureArtifacts">
      <package pattern="Fabrikam.*" />
    </packageSource>
  </packageSourceMapping>
</configuration>
"""
    return "NuGet.Config", f"""<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <add key="nexus" value="https://nexus.wingtip.net/repository/nuget-hosted/" />
  </packageSources>
  <apikeys>
    <add key="https://nexus.wingtip.net/repository/nuget-hosted/" value="{uuid4()}" />
  </apikeys>
  <packageSourceCredentials>
    <nexus>
      <add key="Username" value="nuget-push" />
      <add key="ClearTextPassword" value="{pw(kind='xml')}" />
    </nexus>
  </packageSourceCredentials>
</configuration>
"""


@case("dotnet-launchsettings-usersecrets-secret", "secret", 3)
def _(v):
    if v == 0:
        return "src/Payments.Api/Properties/launchSettings.json", f"""{{
  "$schema": "https://json.schemastore.org/launchsettings.json",
  "profiles": {{
    "https": {{
      "commandName": "Project",
      "dotnetRunMessages": true,
      "launchBrowser": false,
      "applicationUrl": "https://localhost:7141;http://localhost:5141",
      "environmentVariables": {{
        "ASPNETCORE_ENVIRONMENT": "Development",
        "Adyen__ApiKey": "AQE{rs(AN, 4)}hmfxK{rs(AN, 60)}==",
        "Adyen__MerchantAccount": "NorthwindECOM"
      }}
    }}
  }}
}}
"""
    if v == 1:
        return "src/Crm.Web/secrets.json", f"""{{
  "Authentication:Microsoft:ClientId": "{uuid4()}",
  "Authentication:Microsoft:ClientSecret": "{azure_ad_secret()}",
  "ConnectionStrings:CrmDb": "Server={host()};Database=Crm;User Id=crm_web;Password={pw(kind='conn')};TrustServerCertificate=True"
}}
"""
    return "src/Shipping.Api/Properties/launchSettings.json", f"""{{
  "profiles": {{
    "Shipping.Api": {{
      "commandName": "Project",
      "launchBrowser": true,
      "launchUrl": "swagger",
      "environmentVariables": {{
        "ASPNETCORE_ENVIRONMENT": "Development",
        "Shippo__Token": "shippo_live_{hx(40)}",
        "GoogleMaps__ServerKey": "{google_key()}"
      }},
      "applicationUrl": "https://localhost:7055"
    }}
  }}
}}
"""


@case("azure-connection-string-key", "secret", 4)
def _(v):
    acct = pick("nwprodstore", "contosodocs01", "fabrikamblob", "wingtipassets", "globexarchive")
    if v == 0:
        return "src/Documents.Api/appsettings.json", f"""{{
  "Storage": {{
    "ConnectionString": "DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={azure_storage_key()};EndpointSuffix=core.windows.net",
    "Container": "invoices"
  }},
  "Logging": {{ "LogLevel": {{ "Default": "Information" }} }}
}}
"""
    if v == 1:
        return "src/Orders.Functions/local.settings.json", f"""{{
  "IsEncrypted": false,
  "Values": {{
    "AzureWebJobsStorage": "UseDevelopmentStorage=true",
    "FUNCTIONS_WORKER_RUNTIME": "dotnet-isolated",
    "ServiceBusConnection": "Endpoint=sb://orders-prod.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={azure_sas_key()}",
    "OrdersQueue": "orders-created"
  }}
}}
"""
    if v == 2:
        return "src/main/resources/application.yml", f"""spring:
  cloud:
    azure:
      storage:
        blob:
          account-name: {acct}
          account-key: {azure_storage_key()}
          container-name: exports
      eventhubs:
        connection-string: Endpoint=sb://telemetry-ns.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey={azure_sas_key()};EntityPath=device-telemetry
"""
    return "internal/blob/azure.go", f"""package blob

import (
\t"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
)

const accountName = "{acct}"

var accountKey = "{azure_storage_key()}"

func NewClient() (*azblob.Client, error) {{
\tcred, err := azblob.NewSharedKeyCredential(accountName, accountKey)
\tif err != nil {{
\t\treturn nil, err
\t}}
\treturn azblob.NewClientWithSharedKeyCredential("https://"+accountName+".blob.core.windows.net/", cred, nil)
}}
"""


@case("dotnet-azure-ad-client-secret", "secret", 3)
def _(v):
    if v == 0:
        return "src/Graph.Sync/appsettings.json", f"""{{
  "AzureAd": {{
    "Instance": "https://login.microsoftonline.com/",
    "TenantId": "{uuid4()}",
    "ClientId": "{uuid4()}",
    "ClientSecret": "{azure_ad_secret()}"
  }},
  "Graph": {{
    "BaseUrl": "https://graph.microsoft.com/v1.0",
    "Scopes": "https://graph.microsoft.com/.default"
  }}
}}
"""
    if v == 1:
        return "src/Reports/GraphClientFactory.cs", f"""using Azure.Identity;
using Microsoft.Graph;

namespace Reports;

internal static class GraphClientFactory
{{
    private const string TenantId = "{uuid4()}";
    private const string ClientId = "{uuid4()}";
    private const string ClientSecret = "{azure_ad_secret()}";

    public static GraphServiceClient Create()
    {{
        var credential = new ClientSecretCredential(TenantId, ClientId, ClientSecret);
        return new GraphServiceClient(credential, new[] {{ "https://graph.microsoft.com/.default" }});
    }}
}}
"""
    return "src/Provisioning/Program.cs", f"""using Azure.Identity;
using Azure.Security.KeyVault.Secrets;

var credential = new ClientSecretCredential(
    tenantId: "{uuid4()}",
    clientId: "{uuid4()}",
    clientSecret: "{azure_ad_secret()}");

var client = new SecretClient(new Uri("https://kv-provisioning-prod.vault.azure.net/"), credential);
await foreach (var props in client.GetPropertiesOfSecretsAsync())
{{
    Console.WriteLine($"{{props.Name}} enabled={{props.Enabled}} expires={{props.ExpiresOn}}");
}}
"""

# =========================================================================
# Go -- secrets
# =========================================================================
@case("go-const-block-token", "secret", 4)
def _(v):
    if v == 0:
        return "internal/notify/slack.go", f"""package notify

import (
\t"bytes"
\t"encoding/json"
\t"net/http"
\t"time"
)

const (
\tdefaultTimeout = 5 * time.Second
\tdefaultChannel = "#deploys"
\twebhookURL     = "{slack_hook()}"
)

type message struct {{
\tChannel string `json:"channel"`
\tText    string `json:"text"`
}}

func Send(text string) error {{
\tbody, _ := json.Marshal(message{{Channel: defaultChannel, Text: text}})
\tc := &http.Client{{Timeout: defaultTimeout}}
\tresp, err := c.Post(webhookURL, "application/json", bytes.NewReader(body))
\tif err != nil {{
\t\treturn err
\t}}
\treturn resp.Body.Close()
}}
"""
    if v == 1:
        return "pkg/github/client.go", f"""package github

import (
\t"context"
\t"net/http"

\t"github.com/google/go-github/v62/github"
)

const (
\tOrg        = "acme-platform"
\tbotToken   = "{ghp()}"
\tuserAgent  = "release-bot/1.4"
)

func NewClient(ctx context.Context) *github.Client {{
\tc := github.NewClient(&http.Client{{}}).WithAuthToken(botToken)
\tc.UserAgent = userAgent
\treturn c
}}
"""
    if v == 2:
        return "cmd/reconciler/main.go", f"""package main

import (
\t"log"
\t"os"

\t"github.com/stripe/stripe-go/v78"
\t"github.com/stripe/stripe-go/v78/balancetransaction"
)

var stripeKey = "{stripe_sk()}"

func main() {{
\tif k := os.Getenv("STRIPE_KEY"); k != "" {{
\t\tstripeKey = k
\t}}
\tstripe.Key = stripeKey
\tit := balancetransaction.List(&stripe.BalanceTransactionListParams{{}})
\tfor it.Next() {{
\t\tbt := it.BalanceTransaction()
\t\tlog.Printf("%s %d %s", bt.ID, bt.Amount, bt.Currency)
\t}}
\tif err := it.Err(); err != nil {{
\t\tlog.Fatal(err)
\t}}
}}
"""
    return "internal/metrics/datadog.go", f"""package metrics

import "github.com/DataDog/datadog-api-client-go/v2/api/datadog"

// Credentials for the shipping-service Datadog org.
var (
\tddAPIKey = "{datadog_api()}"
\tddAppKey = "{hx(40)}"
\tddSite   = "datadoghq.eu"
)

func Context() map[string]datadog.APIKey {{
\treturn map[string]datadog.APIKey{{
\t\t"apiKeyAuth": {{Key: ddAPIKey}},
\t\t"appKeyAuth": {{Key: ddAppKey}},
\t}}
}}
"""


@case("go-viper-config-secret", "secret", 4)
def _(v):
    if v == 0:
        return "internal/config/config.go", f"""package config

import (
\t"strings"

\t"github.com/spf13/viper"
)

type Config struct {{
\tHTTPAddr    string `mapstructure:"http_addr"`
\tDatabaseURL string `mapstructure:"database_url"`
\tJWTSecret   string `mapstructure:"jwt_secret"`
}}

func Load() (*Config, error) {{
\tv := viper.New()
\tv.SetEnvPrefix("LEDGER")
\tv.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
\tv.AutomaticEnv()
\tv.SetDefault("http_addr", ":8080")
\tv.SetDefault("database_url", "postgres://ledger:{pw(kind='url')}@{host()}:5432/ledger?sslmode=require")
\tv.SetDefault("jwt_secret", "{rs(AN, 48)}")
\tvar c Config
\tif err := v.Unmarshal(&c); err != nil {{
\t\treturn nil, err
\t}}
\treturn &c, nil
}}
"""
    if v == 1:
        return "configs/config.yaml", f"""server:
  addr: ":8443"
  tls:
    cert_file: /etc/ssl/svc/tls.crt
    key_file: /etc/ssl/svc/tls.key
database:
  driver: mysql
  dsn: "{user()}:{pw(kind='url')}@tcp({host()}:3306)/inventory?parseTime=true&tls=true"
  max_open_conns: 25
nats:
  url: nats://nats.prod.lan:4222
  nkey_seed: SUA{rs(UP + '234567', 55)}
"""
    if v == 2:
        return "config.toml", f"""[http]
listen = "0.0.0.0:9000"

[postgres]
host = "{host()}"
port = 5432
user = "{user()}"
password = "{pw()}"
dbname = "pricing"

[sentry]
environment = "production"
"""
    return "internal/config/env.go", f"""package config

import "github.com/caarlos0/env/v11"

type Config struct {{
\tPort         int    `env:"PORT" envDefault:"8080"`
\tRedisAddr    string `env:"REDIS_ADDR" envDefault:"redis:6379"`
\tRedisPass    string `env:"REDIS_PASSWORD" envDefault:"{pw(kind='plain')}"`
\tMailgunKey   string `env:"MAILGUN_API_KEY" envDefault:"{mailgun()}"`
\tMailgunDomain string `env:"MAILGUN_DOMAIN" envDefault:"mg.tailspin.io"`
}}

func Parse() (Config, error) {{
\tvar c Config
\terr := env.Parse(&c)
\treturn c, err
}}
"""


@case("go-makefile-ldflags-secret", "secret", 3)
def _(v):
    if v == 0:
        return "Makefile", f"""BINARY   := telemetry-agent
VERSION  ?= $(shell git describe --tags --always --dirty)
COMMIT   := $(shell git rev-parse --short HEAD)
INGEST_KEY := {hx(32)}

LDFLAGS := -s -w \\
\t-X main.version=$(VERSION) \\
\t-X main.commit=$(COMMIT) \\
\t-X github.com/wingtip/telemetry-agent/internal/ingest.apiKey=$(INGEST_KEY)

.PHONY: build test
build:
\tCGO_ENABLED=0 go build -ldflags "$(LDFLAGS)" -o bin/$(BINARY) ./cmd/agent

test:
\tgo test -race ./...
"""
    if v == 1:
        return "Makefile", f"""GO ?= go
PKG := github.com/northwind/updater

build:
\t$(GO) build -trimpath -ldflags "-X $(PKG)/internal/update.token={glpat()} -X $(PKG)/internal/update.channel=stable" -o dist/updater ./cmd/updater

release: build
\ttar -czf dist/updater-$(shell uname -s)-$(shell uname -m).tar.gz -C dist updater
"""
    return ".goreleaser.yaml", f"""version: 2
project_name: edge-proxy
builds:
  - main: ./cmd/edge-proxy
    env:
      - CGO_ENABLED=0
    goos: [linux, darwin]
    goarch: [amd64, arm64]
    ldflags:
      - -s -w
      - -X main.version={{{{.Version}}}}
      - -X main.commit={{{{.Commit}}}}
      - -X main.sentryDSN=https://{hx(32)}@o{R.randint(100000, 999999)}.ingest.sentry.io/{R.randint(1000000, 9999999)}
      - -X main.licenseKey={newrelic_license()}
archives:
  - formats: [tar.gz]
"""


@case("go-test-credential-unmarked", "secret", 3)
def _(v):
    if v == 0:
        return "internal/payments/client_integration_test.go", f"""//go:build integration

package payments

import (
\t"context"
\t"testing"
\t"time"
)

func TestCreateCharge(t *testing.T) {{
\tc := NewClient("https://api.paymentgateway.io", "{rs(AN, 40)}")
\tctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
\tdefer cancel()
\tch, err := c.CreateCharge(ctx, ChargeRequest{{AmountCents: 100, Currency: "EUR", Reference: t.Name()}})
\tif err != nil {{
\t\tt.Fatalf("create charge: %v", err)
\t}}
\tif ch.Status != "succeeded" {{
\t\tt.Errorf("status = %q", ch.Status)
\t}}
}}
"""
    if v == 1:
        return "internal/store/store_test.go", f"""package store

import (
\t"context"
\t"testing"
)

const testDSN = "postgres://ci_runner:{pw(kind='url')}@{host()}:5432/ledger_ci?sslmode=require"

func TestInsertEntry(t *testing.T) {{
\tctx := context.Background()
\ts, err := Open(ctx, testDSN)
\tif err != nil {{
\t\tt.Skipf("db unavailable: %v", err)
\t}}
\tdefer s.Close()
\tif err := s.Insert(ctx, Entry{{Account: "1000", Amount: 4200}}); err != nil {{
\t\tt.Fatal(err)
\t}}
}}
"""
    return "internal/s3sync/sync_test.go", f"""package s3sync

import (
\t"testing"

\t"github.com/aws/aws-sdk-go-v2/credentials"
)

func TestUploadManifest(t *testing.T) {{
\tprov := credentials.NewStaticCredentialsProvider("{aws_akid()}", "{aws_secret()}", "")
\tu := NewUploader("acme-build-artifacts", "us-east-1", prov)
\tif err := u.Upload("manifest.json", []byte(`{{"build":"ok"}}`)); err != nil {{
\t\tt.Fatal(err)
\t}}
}}
"""


# =========================================================================
# Rust -- secrets
# =========================================================================
@case("rust-config-toml-credential", "secret", 3)
def _(v):
    if v == 0:
        return "config/production.toml", f"""[application]
host = "0.0.0.0"
port = 8000
base_url = "https://newsletter.lumen.dev"

[database]
host = "{host()}"
port = 5432
username = "newsletter"
password = "{pw()}"
database_name = "newsletter"
require_ssl = true

[email_client]
base_url = "https://api.postmarkapp.com"
sender_email = "hello@lumen.dev"
authorization_token = "{uuid4()}"
timeout_milliseconds = 10000
"""
    if v == 1:
        return ".cargo/config.toml", f"""[registries.acme]
index = "sparse+https://cargo.acme.internal/api/v1/crates/"
token = "Bearer {rs(AN, 40)}"

[net]
git-fetch-with-cli = true

[build]
rustflags = ["-C", "target-cpu=native"]
"""
    return "settings/default.yaml", f"""server:
  bind: 0.0.0.0:3000
  workers: 4
redis:
  url: redis://default:{rs(AN, 32)}@redis-primary.prod.lan:6379/0
s3:
  bucket: lumen-media
  region: eu-central-1
  access_key: {aws_akid()}
  secret_key: {aws_secret()}
"""


@case("rust-const-static-secret", "secret", 4)
def _(v):
    if v == 0:
        return "src/auth/jwt.rs", f"""use jsonwebtoken::{{decode, encode, DecodingKey, EncodingKey, Header, Validation}};
use serde::{{Deserialize, Serialize}};

const JWT_SECRET: &[u8] = b"{rs(AN, 44)}";

#[derive(Debug, Serialize, Deserialize)]
pub struct Claims {{
    pub sub: String,
    pub exp: usize,
}}

pub fn sign(claims: &Claims) -> jsonwebtoken::errors::Result<String> {{
    encode(&Header::default(), claims, &EncodingKey::from_secret(JWT_SECRET))
}}

pub fn verify(token: &str) -> jsonwebtoken::errors::Result<Claims> {{
    decode::<Claims>(token, &DecodingKey::from_secret(JWT_SECRET), &Validation::default())
        .map(|d| d.claims)
}}
"""
    if v == 1:
        return "src/clients/openai.rs", f"""use reqwest::header::{{HeaderMap, HeaderValue, AUTHORIZATION}};

pub static API_BASE: &str = "https://api.openai.com/v1";
static API_KEY: &str = "{openai_key()}";

pub fn client() -> reqwest::Client {{
    let mut headers = HeaderMap::new();
    headers.insert(
        AUTHORIZATION,
        HeaderValue::from_str(&format!("Bearer {{}}", API_KEY)).expect("header"),
    );
    reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .expect("client")
}}
"""
    if v == 2:
        key = rbytes(32)
        arr = ", ".join("0x%02x" % b for b in key)
        return "src/crypto/mod.rs", f"""use aes_gcm::{{aead::Aead, Aes256Gcm, KeyInit, Nonce}};

/// Data-encryption key for the `documents.body` column.
const DEK: [u8; 32] = [{arr}];

pub fn seal(nonce: &[u8; 12], plaintext: &[u8]) -> Vec<u8> {{
    let cipher = Aes256Gcm::new_from_slice(&DEK).expect("key len");
    cipher.encrypt(Nonce::from_slice(nonce), plaintext).expect("encrypt")
}}
"""
    return "tests/api.rs", f"""use reqwest::StatusCode;

const BASE: &str = "https://staging-api.lumen.dev";
const ADMIN_TOKEN: &str = "{jwt({'sub': 'admin@lumen.dev', 'role': 'admin', 'iat': 1717200000, 'exp': 1893456000})}";

#[tokio::test]
async fn admin_can_list_users() {{
    let res = reqwest::Client::new()
        .get(format!("{{BASE}}/admin/users"))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
}}
"""


# =========================================================================
# Scala / Play, Kotlin -- secrets
# =========================================================================
@case("play-hocon-secret", "secret", 4)
def _(v):
    if v == 0:
        return "conf/application.conf", f"""# https://www.playframework.com/documentation/latest/ConfigFile
play.http.secret.key = "{rs(AN + '=:;<>?@[]^_', 64)}"
play.i18n.langs = [ "en", "de" ]
play.filters.hosts.allowed = [".wingtip.net", "localhost:9000"]

slick.dbs.default {{
  profile = "slick.jdbc.PostgresProfile$"
  db {{
    driver = "org.postgresql.Driver"
    url = "jdbc:postgresql://{host()}:5432/shop"
    user = "shop"
    password = ${{?DB_PASSWORD}}
    numThreads = 10
  }}
}}
"""
    if v == 1:
        return "conf/prod.conf", f"""include "application.conf"

play.http.secret.key = ${{?APPLICATION_SECRET}}

db.default {{
  url = "jdbc:mysql://{host()}/catalog?useSSL=true"
  username = "catalog"
  password = "{pw()}"
}}

akka.http.server.idle-timeout = 120s
"""
    if v == 2:
        return "src/main/resources/application.conf", f"""ktor {{
  deployment {{
    port = 8080
  }}
  application {{
    modules = [ com.globex.crm.ApplicationKt.module ]
  }}
}}

jwt {{
  domain = "https://crm.globex.com/"
  audience = "crm-api"
  realm = "crm"
  secret = "{rs(AN, 40)}"
}}
"""
    return "conf/silhouette.conf", f"""silhouette {{
  authenticator.cookieName = "authenticator"
  authenticator.secureCookie = true
  authenticator.signer.key = "{rs(AN, 32)}"
  authenticator.crypter.key = "{rs(AN, 32)}"

  google {{
    authorizationURL = "https://accounts.google.com/o/oauth2/auth"
    accessTokenURL = "https://accounts.google.com/o/oauth2/token"
    redirectURL = "https://app.wingtip.net/authenticate/google"
    clientID = "{digits(12)}-{rs(LO + DG, 32)}.apps.googleusercontent.com"
    clientSecret = "GOCSPX-{rs(URLSAFE, 28)}"
    scope = "profile email"
  }}
}}
"""


@case("sbt-credentials-literal", "secret", 3)
def _(v):
    if v == 0:
        return "build.sbt", f"""ThisBuild / organization := "io.lumen"
ThisBuild / scalaVersion := "3.3.3"
ThisBuild / version := "0.9.2"

lazy val root = (project in file("."))
  .settings(
    name := "lumen-events",
    libraryDependencies ++= Seq(
      "org.typelevel" %% "cats-effect" % "3.5.4",
      "co.fs2" %% "fs2-kafka" % "3.5.1"
    ),
    publishTo := Some("Lumen Nexus" at "https://nexus.lumen.dev/repository/maven-releases/"),
    credentials += Credentials("Sonatype Nexus Repository Manager", "nexus.lumen.dev", "sbt-publisher", "{pw()}")
  )
"""
    if v == 1:
        return ".sbt/.credentials", f"""realm=Artifactory Realm
host=globex.jfrog.io
user=ci-scala
password=AKCp8{rs(AN, 68)}
"""
    return "project/Publish.scala", f"""import sbt._
import sbt.Keys._

object Publish {{
  private val githubToken = "{ghp()}"

  val settings: Seq[Setting[_]] = Seq(
    publishMavenStyle := true,
    publishTo := Some("GitHub Packages" at "https://maven.pkg.github.com/globex/scala-commons"),
    credentials += Credentials("GitHub Package Registry", "maven.pkg.github.com", "globex-bot", githubToken)
  )
}}
"""


@case("kotlin-companion-const-secret", "secret", 3)
def _(v):
    if v == 0:
        return "src/main/kotlin/com/tailspin/notify/push/FcmSender.kt", f"""package com.tailspin.notify.push

import okhttp3.MediaType.Companion.toMediaType
import okhttp3.OkHttpClient
import okhttp3.Request
import okhttp3.RequestBody.Companion.toRequestBody

class FcmSender(private val http: OkHttpClient) {{

    fun send(deviceToken: String, title: String) {{
        val body = \"\"\"{{"to":"$deviceToken","notification":{{"title":"$title"}}}}\"\"\"
        val req = Request.Builder()
            .url(ENDPOINT)
            .header("Authorization", "key=$SERVER_KEY")
            .post(body.toRequestBody("application/json".toMediaType()))
            .build()
        http.newCall(req).execute().close()
    }}

    companion object {{
        private const val ENDPOINT = "https://fcm.googleapis.com/fcm/send"
        private const val SERVER_KEY = "AAAA{rs(URLSAFE, 7)}:APA91b{rs(URLSAFE, 134)}"
    }}
}}
"""
    if v == 1:
        return "src/main/kotlin/io/lumen/search/AlgoliaConfig.kt", f"""package io.lumen.search

import com.algolia.search.client.ClientSearch
import com.algolia.search.model.APIKey
import com.algolia.search.model.ApplicationID

object AlgoliaConfig {{
    const val APP_ID = "{rs(UP + DG, 10)}"
    // admin key: needed for index settings + reindex job
    const val ADMIN_API_KEY = "{hx(32)}"

    val client by lazy {{ ClientSearch(ApplicationID(APP_ID), APIKey(ADMIN_API_KEY)) }}
}}
"""
    return "src/main/kotlin/com/contoso/billing/PaypalClient.kt", f"""package com.contoso.billing

import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.util.Base64

internal class PaypalClient {{
    private val clientId = "A{rs(URLSAFE, 79)}"
    private val clientSecret = "E{rs(URLSAFE, 79)}"

    fun tokenRequest(): HttpRequest {{
        val basic = Base64.getEncoder().encodeToString("$clientId:$clientSecret".toByteArray())
        return HttpRequest.newBuilder(URI.create("https://api-m.paypal.com/v1/oauth2/token"))
            .header("Authorization", "Basic $basic")
            .POST(HttpRequest.BodyPublishers.ofString("grant_type=client_credentials"))
            .build()
    }}

    val http: HttpClient = HttpClient.newHttpClient()
}}
"""

# =========================================================================
# Java / Spring / JVM -- hard negatives
# =========================================================================
@case("spring-env-placeholder-config", "none", 4)
def _(v):
    if v == 0:
        return "src/main/resources/application-prod.yml", f"""spring:
  datasource:
    url: jdbc:postgresql://${{DB_HOST}}:${{DB_PORT:5432}}/${{DB_NAME:orders}}
    username: ${{DB_USERNAME}}
    password: ${{DB_PASSWORD}}
    hikari:
      maximum-pool-size: ${{DB_POOL_SIZE:20}}
  mail:
    host: smtp.sendgrid.net
    port: 587
    username: apikey
    password: ${{SENDGRID_API_KEY}}
  rabbitmq:
    addresses: ${{RABBITMQ_ADDRESSES}}
    username: ${{RABBITMQ_USER:orders}}
    password: ${{RABBITMQ_PASSWORD}}

stripe:
  secret-key: ${{STRIPE_SECRET_KEY}}
  webhook-secret: ${{STRIPE_WEBHOOK_SECRET:}}
"""
    if v == 1:
        return "src/main/resources/application.properties", f"""spring.application.name=ledger-api
spring.config.import=optional:vault://,optional:configtree:/run/secrets/
spring.cloud.vault.uri=https://vault.corp.local:8200
spring.cloud.vault.authentication=KUBERNETES
spring.cloud.vault.kubernetes.role=ledger-api
spring.cloud.vault.kv.backend=secret
spring.cloud.vault.kv.default-context=ledger-api
spring.datasource.url=jdbc:postgresql://pg-primary.svc.cluster.local:5432/ledger
spring.datasource.username=${{ledger.db.username}}
spring.datasource.password=${{ledger.db.password}}
app.jwt.secret=${{ledger.jwt.signing-secret}}
"""
    if v == 2:
        return "src/main/resources/application-cloud.yml", f"""spring:
  datasource:
    url: ${{vcap.services.orders-db.credentials.jdbcUrl}}
    username: ${{vcap.services.orders-db.credentials.username}}
    password: ${{vcap.services.orders-db.credentials.password}}
  data:
    redis:
      host: ${{vcap.services.orders-cache.credentials.host}}
      password: ${{vcap.services.orders-cache.credentials.password}}
      port: ${{vcap.services.orders-cache.credentials.port}}
aws:
  access-key-id: ${{AWS_ACCESS_KEY_ID:}}
  secret-access-key: ${{AWS_SECRET_ACCESS_KEY:}}
"""
    return "src/main/resources/application-local.yml", f"""# Local profile: copy .env.example to .env and fill in your own values
spring:
  datasource:
    url: jdbc:postgresql://localhost:5432/catalog
    username: catalog
    password: <set-in-.env>
  security:
    oauth2:
      client:
        registration:
          github:
            client-id: your-github-client-id
            client-secret: your-github-client-secret
openai:
  api-key: sk-...your-key-here
"""


@case("spring-value-empty-or-nonsecret-default", "none", 4)
def _(v):
    p = pkg()
    pp = p.replace(".", "/")
    if v == 0:
        return f"src/main/java/{pp}/security/JwtSettings.java", f"""package {p}.security;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

@Component
public class JwtSettings {{

    @Value("${{security.jwt.secret:}}")
    private String secret;

    @Value("${{security.jwt.issuer:https://auth.{p.split('.')[1]}.com/}}")
    private String issuer;

    @Value("${{security.jwt.audience:{svc()}}}")
    private String audience;

    @Value("${{security.jwt.jwk-set-uri:https://auth.{p.split('.')[1]}.com/.well-known/jwks.json}}")
    private String jwkSetUri;

    @Value("${{security.jwt.key-id:{R.choice(['signing-2024-06', 'rs256-primary', 'k1'])}}}")
    private String keyId;

    public boolean isConfigured() {{
        return secret != null && !secret.isBlank();
    }}
}}
"""
    if v == 1:
        return f"src/main/java/{pp}/api/ApiKeyFilter.java", f"""package {p}.api;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

@Component
public class ApiKeyFilter extends OncePerRequestFilter {{

    @Value("${{api.key.header-name:X-API-Key}}")
    private String headerName;

    @Value("${{api.key.secret-name:partner-api-keys}}")
    private String secretName;

    @Value("${{api.key.cache-ttl:PT5M}}")
    private java.time.Duration cacheTtl;

    private final ApiKeyStore store;

    public ApiKeyFilter(ApiKeyStore store) {{ this.store = store; }}

    @Override
    protected void doFilterInternal(HttpServletRequest req, HttpServletResponse res, FilterChain chain)
            throws ServletException, IOException {{
        String presented = req.getHeader(headerName);
        if (presented == null || !store.matches(secretName, presented)) {{
            res.sendError(HttpServletResponse.SC_UNAUTHORIZED);
            return;
        }}
        chain.doFilter(req, res);
    }}
}}
"""
    if v == 2:
        return f"src/main/kotlin/{pp}/config/TokenProperties.kt", f"""package {p}.config

import org.springframework.boot.context.properties.ConfigurationProperties
import java.time.Duration

@ConfigurationProperties(prefix = "app.token")
data class TokenProperties(
    val tokenUrl: String = "https://login.microsoftonline.com/common/oauth2/v2.0/token",
    val passwordResetPath: String = "/account/password/reset",
    val secretName: String = "orders-signing-key",
    val accessTokenTtl: Duration = Duration.ofMinutes(15),
    val refreshTokenTtl: Duration = Duration.ofDays(14),
    val passwordMinLength: Int = 12,
    val apiKeyHeader: String = "X-API-Key",
)
"""
    return f"src/main/java/{pp}/client/PartnerClientConfig.java", f"""package {p}.client;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.client.RestClient;

@Configuration
public class PartnerClientConfig {{

    @Bean
    RestClient partnerClient(
            @Value("${{partner.base-url:https://sandbox.partner-api.example.com}}") String baseUrl,
            @Value("${{partner.api-key:#{{null}}}}") String apiKey,
            @Value("${{partner.password-grant.enabled:false}}") boolean passwordGrant) {{
        RestClient.Builder b = RestClient.builder().baseUrl(baseUrl);
        if (apiKey != null) {{
            b.defaultHeader("X-Api-Key", apiKey);
        }}
        return b.build();
    }}
}}
"""


@case("encrypted-property-values", "none", 4)
def _(v):
    if v == 0:
        return "config-repo/orders-service-prod.yml", f"""spring:
  datasource:
    url: jdbc:postgresql://{host()}:5432/orders
    username: orders_app
    password: '{{cipher}}{hx(R.choice([160, 192, 224]))}'
stripe:
  secret-key: '{{cipher}}{hx(256)}'
sendgrid:
  api-key: '{{cipher}}{hx(224)}'
"""
    if v == 1:
        return "src/main/resources/application-prod.properties", f"""# Values encrypted with jasypt; the encryptor password is injected at runtime
jasypt.encryptor.password=${{JASYPT_ENCRYPTOR_PASSWORD}}
jasypt.encryptor.algorithm=PBEWITHHMACSHA512ANDAES_256
spring.datasource.url=jdbc:mysql://{host()}:3306/billing
spring.datasource.username=billing_rw
spring.datasource.password=ENC({b64bytes(48)})
billing.gateway.api-key=ENC({b64bytes(64)})
"""
    if v == 1 + 1:
        return ".mvn/settings-ci.xml", f"""<settings>
  <servers>
    <server>
      <id>nexus-releases</id>
      <username>ci-deployer</username>
      <!-- encrypted with mvn -ep; master password lives in ~/.m2/settings-security.xml on the agents -->
      <password>{{{b64bytes(33)}}}</password>
    </server>
  </servers>
</settings>
"""
    return "deploy/k8s/sealed-secret.yaml", f"""apiVersion: bitnami.com/v1alpha1
kind: SealedSecret
metadata:
  name: billing-api
  namespace: billing
spec:
  encryptedData:
    SPRING_DATASOURCE_PASSWORD: Ag{b64bytes(360)}
    STRIPE_SECRET_KEY: Ag{b64bytes(380)}
  template:
    metadata:
      name: billing-api
      namespace: billing
"""


@case("jwt-issuer-audience-jwks-config", "none", 4)
def _(v):
    if v == 0:
        return "src/main/resources/application.yml", f"""spring:
  security:
    oauth2:
      resourceserver:
        jwt:
          issuer-uri: https://login.microsoftonline.com/{uuid4()}/v2.0
          jwk-set-uri: https://login.microsoftonline.com/{uuid4()}/discovery/v2.0/keys
          audiences:
            - api://{uuid4()}
          jws-algorithms: RS256
app:
  security:
    token-header: Authorization
    token-prefix: "Bearer "
    secret-header-name: X-Signature
"""
    if v == 1:
        return "src/Orders.Api/appsettings.json", f"""{{
  "Authentication": {{
    "Schemes": {{
      "Bearer": {{
        "Authority": "https://auth.northwind.io",
        "ValidAudiences": [ "orders-api" ],
        "ValidIssuer": "https://auth.northwind.io",
        "RequireHttpsMetadata": true
      }}
    }}
  }},
  "Jwt": {{
    "Issuer": "https://auth.northwind.io",
    "Audience": "orders-api",
    "ClockSkewSeconds": 30,
    "SigningKeyId": "{hx(16)}",
    "Key": ""
  }}
}}
"""
    if v == 2:
        return "conf/auth.conf", f"""auth {{
  jwt {{
    issuer = "https://id.wingtip.net/"
    audience = "shop-api"
    jwks-url = "https://id.wingtip.net/.well-known/jwks.json"
    leeway = 30s
    secret = ${{?JWT_SECRET}}
    key-id = "{hx(20)}"
  }}
}}
"""
    return "internal/auth/verifier.go", f"""package auth

import (
\t"context"
\t"time"

\t"github.com/lestrrat-go/jwx/v2/jwk"
\t"github.com/lestrrat-go/jwx/v2/jwt"
)

const (
\tIssuer    = "https://auth.lumen.dev/"
\tAudience  = "lumen-api"
\tJWKSURL   = "https://auth.lumen.dev/.well-known/jwks.json"
\tSecretEnv = "LUMEN_JWT_SECRET"
)

func Verify(ctx context.Context, cache *jwk.Cache, raw []byte) (jwt.Token, error) {{
\tset, err := cache.Get(ctx, JWKSURL)
\tif err != nil {{
\t\treturn nil, err
\t}}
\treturn jwt.Parse(raw, jwt.WithKeySet(set), jwt.WithIssuer(Issuer), jwt.WithAudience(Audience),
\t\tjwt.WithAcceptableSkew(30*time.Second))
}}
"""


@case("keystore-path-alias-config", "none", 4)
def _(v):
    if v == 0:
        return "src/main/resources/application-prod.yml", f"""server:
  port: 8443
  ssl:
    enabled: true
    key-store: file:/etc/ssl/orders/keystore.p12
    key-store-type: PKCS12
    key-store-password: ${{KEYSTORE_PASSWORD}}
    key-alias: orders-tls
    key-password: ${{KEY_PASSWORD:${{KEYSTORE_PASSWORD}}}}
    trust-store: classpath:truststore.jks
    trust-store-password: ${{TRUSTSTORE_PASSWORD}}
    client-auth: want
"""
    if v == 1:
        return "src/main/resources/application.properties", f"""spring.ssl.bundle.jks.partner.keystore.location=classpath:certs/partner-client.p12
spring.ssl.bundle.jks.partner.keystore.type=PKCS12
spring.ssl.bundle.jks.partner.keystore.password=${{PARTNER_KEYSTORE_PASSWORD}}
spring.ssl.bundle.jks.partner.key.alias=partner-client
spring.ssl.bundle.jks.partner.truststore.location=classpath:certs/partner-ca.p12
saml2.signing.key-alias=sp-signing
saml2.signing.certificate-thumbprint={HX(40)}
"""
    if v == 2:
        return "app/build.gradle.kts", f"""import java.util.Properties

val keystoreProps = Properties().apply {{
    val f = rootProject.file("keystore.properties")
    if (f.exists()) f.inputStream().use {{ load(it) }}
}}

android {{
    namespace = "com.fabrikam.field"
    signingConfigs {{
        create("release") {{
            storeFile = file(keystoreProps.getProperty("storeFile") ?: "release.jks")
            storePassword = keystoreProps.getProperty("storePassword") ?: System.getenv("SIGNING_STORE_PASSWORD")
            keyAlias = keystoreProps.getProperty("keyAlias") ?: "field-release"
            keyPassword = keystoreProps.getProperty("keyPassword") ?: System.getenv("SIGNING_KEY_PASSWORD")
        }}
    }}
    buildTypes {{
        getByName("release") {{
            signingConfig = signingConfigs.getByName("release")
        }}
    }}
}}
"""
    return "src/main/java/com/acme/tls/KeyStoreProvider.java", f"""package com.acme.tls;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;

public final class KeyStoreProvider {{

    public static final String KEYSTORE_PATH_PROPERTY = "acme.tls.keystore.path";
    public static final String KEYSTORE_PASSWORD_ENV = "ACME_TLS_KEYSTORE_PASSWORD";
    public static final String KEY_ALIAS = "acme-service";
    public static final String KEYSTORE_TYPE = "PKCS12";

    public static KeyStore load() throws Exception {{
        Path path = Path.of(System.getProperty(KEYSTORE_PATH_PROPERTY, "/etc/acme/tls/service.p12"));
        char[] password = System.getenv(KEYSTORE_PASSWORD_ENV).toCharArray();
        KeyStore ks = KeyStore.getInstance(KEYSTORE_TYPE);
        try (InputStream in = Files.newInputStream(path)) {{
            ks.load(in, password);
        }}
        return ks;
    }}
}}
"""


@case("gradle-verification-metadata", "none", 3)
def _(v):
    libs = [("com.squareup.okhttp3", "okhttp", "4.12.0"), ("com.fasterxml.jackson.core", "jackson-databind", "2.17.1"),
            ("org.jetbrains.kotlin", "kotlin-stdlib", "1.9.24"), ("com.google.guava", "guava", "33.2.1-jre"),
            ("org.slf4j", "slf4j-api", "2.0.13"), ("io.micrometer", "micrometer-core", "1.13.1"),
            ("org.postgresql", "postgresql", "42.7.3"), ("com.zaxxer", "HikariCP", "5.1.0")]
    sel = R.sample(libs, 4)
    comps = []
    for g, a, ver in sel:
        comps.append(f"""      <component group="{g}" name="{a}" version="{ver}">
         <artifact name="{a}-{ver}.jar">
            <sha256 value="{sha256hex()}" origin="Generated by Gradle"/>
         </artifact>
         <artifact name="{a}-{ver}.pom">
            <sha256 value="{sha256hex()}" origin="Generated by Gradle"/>
         </artifact>
      </component>""")
    comps = "\n".join(comps)
    if v == 2:
        return "gradle/verification-metadata.xml", f"""<?xml version="1.0" encoding="UTF-8"?>
<verification-metadata xmlns="https://schema.gradle.org/dependency-verification" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="https://schema.gradle.org/dependency-verification https://schema.gradle.org/dependency-verification/dependency-verification-1.3.xsd">
   <configuration>
      <verify-metadata>true</verify-metadata>
      <verify-signatures>true</verify-signatures>
      <trusted-keys>
         <trusted-key id="{HX(40)}" group="com.squareup.okhttp3"/>
         <trusted-key id="{HX(40)}" group="org.jetbrains.kotlin"/>
         <trusted-key id="{HX(16)}" group="com.fasterxml.jackson"/>
      </trusted-keys>
   </configuration>
   <components>
{comps}
   </components>
</verification-metadata>
"""
    return "gradle/verification-metadata.xml", f"""<?xml version="1.0" encoding="UTF-8"?>
<verification-metadata xmlns="https://schema.gradle.org/dependency-verification" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="https://schema.gradle.org/dependency-verification https://schema.gradle.org/dependency-verification/dependency-verification-1.3.xsd">
   <configuration>
      <verify-metadata>true</verify-metadata>
      <verify-signatures>false</verify-signatures>
   </configuration>
   <components>
{comps}
   </components>
</verification-metadata>
"""


@case("build-pinned-checksums-digests", "none", 4)
def _(v):
    if v == 0:
        return "gradle/wrapper/gradle-wrapper.properties", f"""distributionBase=GRADLE_USER_HOME
distributionPath=wrapper/dists
distributionSha256Sum={sha256hex()}
distributionUrl=https\\://services.gradle.org/distributions/gradle-8.8-bin.zip
networkTimeout=10000
validateDistributionUrl=true
zipStoreBase=GRADLE_USER_HOME
zipStorePath=wrapper/dists
"""
    if v == 1:
        return "pom.xml", f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.contoso</groupId>
  <artifactId>inventory-service</artifactId>
  <version>3.2.0</version>
  <build>
    <plugins>
      <plugin>
        <groupId>com.google.cloud.tools</groupId>
        <artifactId>jib-maven-plugin</artifactId>
        <version>3.4.3</version>
        <configuration>
          <from>
            <image>eclipse-temurin:21-jre@sha256:{sha256hex()}</image>
          </from>
          <to>
            <image>ghcr.io/contoso/inventory-service</image>
            <tags><tag>${{project.version}}</tag></tags>
          </to>
        </configuration>
      </plugin>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-gpg-plugin</artifactId>
        <version>3.2.4</version>
        <configuration>
          <keyname>{HX(16)}</keyname>
          <passphraseEnvName>MAVEN_GPG_PASSPHRASE</passphraseEnvName>
        </configuration>
      </plugin>
    </plugins>
  </build>
</project>
"""
    if v == 2:
        return ".mvn/wrapper/maven-wrapper.properties", f"""wrapperVersion=3.3.2
distributionType=only-script
distributionUrl=https://repo.maven.apache.org/maven2/org/apache/maven/apache-maven/3.9.8/apache-maven-3.9.8-bin.zip
distributionSha256Sum={sha256hex()}
wrapperSha256Sum={sha256hex()}
"""
    return "build.gradle.kts", f"""plugins {{
    id("org.springframework.boot") version "3.3.1"
    id("com.google.cloud.tools.jib") version "3.4.3"
}}

jib {{
    from {{
        image = "gcr.io/distroless/java21-debian12@sha256:{sha256hex()}"
    }}
    to {{
        image = "europe-docker.pkg.dev/northwind-prod/services/billing-api"
        tags = setOf(project.version.toString(), "git-{sha1hex()[:12]}")
    }}
    container {{
        jvmFlags = listOf("-XX:MaxRAMPercentage=75")
        labels.put("org.opencontainers.image.revision", "{sha1hex()}")
    }}
}}
"""


@case("maven-gradle-credentials-from-env", "none", 4)
def _(v):
    if v == 0:
        return "settings.xml", f"""<settings>
  <servers>
    <server>
      <id>nexus-releases</id>
      <username>${{env.NEXUS_USERNAME}}</username>
      <password>${{env.NEXUS_PASSWORD}}</password>
    </server>
    <server>
      <id>github</id>
      <username>${{env.GITHUB_ACTOR}}</username>
      <password>${{env.GITHUB_TOKEN}}</password>
    </server>
  </servers>
</settings>
"""
    if v == 1:
        return "build.gradle.kts", f"""publishing {{
    repositories {{
        maven {{
            name = "GitHubPackages"
            url = uri("https://maven.pkg.github.com/northwind/platform-libs")
            credentials {{
                username = project.findProperty("gpr.user") as String? ?: System.getenv("GITHUB_ACTOR")
                password = project.findProperty("gpr.key") as String? ?: System.getenv("GITHUB_TOKEN")
            }}
        }}
        maven {{
            name = "nexus"
            url = uri("https://nexus.northwind.io/repository/releases/")
            credentials(PasswordCredentials::class)
        }}
    }}
}}

signing {{
    val signingKey: String? by project
    val signingPassword: String? by project
    useInMemoryPgpKeys(signingKey, signingPassword)
    sign(publishing.publications)
}}
"""
    if v == 2:
        return "gradle.properties", f"""org.gradle.jvmargs=-Xmx3g -XX:+UseParallelGC
org.gradle.configuration-cache=true
# Publishing credentials are read from ~/.gradle/gradle.properties or ORG_GRADLE_PROJECT_* env vars:
#   nexusUsername=...
#   nexusPassword=...
signing.keyId={HX(8)}
signing.secretKeyRingFile=/home/ci/.gnupg/secring.gpg
kotlin.incremental=true
"""
    return "build.sbt", f"""ThisBuild / organization := "io.lumen"
ThisBuild / scalaVersion := "2.13.14"

credentials += Credentials(Path.userHome / ".sbt" / ".credentials")
credentials ++= sys.env.get("NEXUS_PASSWORD").map(pw =>
  Credentials("Sonatype Nexus Repository Manager", "nexus.lumen.dev", sys.env.getOrElse("NEXUS_USER", "ci"), pw)
).toList

publishTo := Some("releases" at "https://nexus.lumen.dev/repository/maven-releases/")
"""

# =========================================================================
# .NET -- hard negatives
# =========================================================================
@case("azure-keyvault-reference-config", "none", 4)
def _(v):
    if v == 0:
        return "src/Orders.Api/appsettings.Production.json", f"""{{
  "ConnectionStrings": {{
    "OrdersDb": "@Microsoft.KeyVault(SecretUri=https://kv-orders-prod.vault.azure.net/secrets/OrdersDbConnection/{hx(32)})",
    "ServiceBus": "@Microsoft.KeyVault(VaultName=kv-orders-prod;SecretName=ServiceBusConnection)"
  }},
  "Stripe": {{
    "SecretKey": "@Microsoft.KeyVault(SecretUri=https://kv-orders-prod.vault.azure.net/secrets/StripeSecretKey/)"
  }},
  "KeyVault": {{
    "Uri": "https://kv-orders-prod.vault.azure.net/",
    "ManagedIdentityClientId": "{uuid4()}"
  }}
}}
"""
    if v == 1:
        return "src/Billing.Api/Program.cs", f"""using Azure.Identity;
using Azure.Extensions.AspNetCore.Configuration.Secrets;

var builder = WebApplication.CreateBuilder(args);

var vaultUri = new Uri(builder.Configuration["KeyVault:Uri"] ?? "https://kv-billing-prod.vault.azure.net/");
builder.Configuration.AddAzureKeyVault(vaultUri, new DefaultAzureCredential(new DefaultAzureCredentialOptions
{{
    ManagedIdentityClientId = builder.Configuration["AZURE_CLIENT_ID"],
}}), new KeyVaultSecretManager());

var dbPassword = builder.Configuration["Billing--DbPassword"];
var apiKeySecretName = "Billing--PartnerApiKey";

builder.Services.AddBillingDb(builder.Configuration.GetConnectionString("BillingDb")!, dbPassword);
builder.Services.AddPartnerClient(o => o.ApiKey = builder.Configuration[apiKeySecretName]);

var app = builder.Build();
app.MapGet("/healthz", () => Results.Ok());
app.Run();
"""
    if v == 2:
        return "src/main/resources/application.yml", f"""spring:
  cloud:
    azure:
      keyvault:
        secret:
          property-source-enabled: true
          property-sources:
            - name: crm-secrets
              endpoint: https://kv-crm-prod.vault.azure.net/
              credential:
                managed-identity-enabled: true
                client-id: {uuid4()}
  datasource:
    url: jdbc:sqlserver://sql-crm-prod.database.windows.net:1433;database=crm;encrypt=true
    username: crm-app
    password: ${{crm-db-password}}
"""
    return "deploy/bicep/appservice.parameters.json", f"""{{
  "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentParameters.json#",
  "contentVersion": "1.0.0.0",
  "parameters": {{
    "sqlAdminPassword": {{
      "reference": {{
        "keyVault": {{
          "id": "/subscriptions/{uuid4()}/resourceGroups/rg-shared-prod/providers/Microsoft.KeyVault/vaults/kv-shared-prod"
        }},
        "secretName": "sql-admin-password"
      }}
    }},
    "appServicePlanSku": {{ "value": "P1v3" }},
    "storageAccountName": {{ "value": "stnwinvoicesprod" }}
  }}
}}
"""


@case("dotnet-integrated-auth-connection", "none", 3)
def _(v):
    if v == 0:
        return "src/Portal.Web/appsettings.Development.json", f"""{{
  "ConnectionStrings": {{
    "DefaultConnection": "Server=(localdb)\\\\mssqllocaldb;Database=aspnet-Portal-{uuid4()};Trusted_Connection=True;MultipleActiveResultSets=true"
  }},
  "Logging": {{
    "LogLevel": {{
      "Default": "Debug",
      "Microsoft.EntityFrameworkCore.Database.Command": "Information"
    }}
  }}
}}
"""
    if v == 1:
        return "src/Reports/appsettings.json", f"""{{
  "ConnectionStrings": {{
    "Reports": "Server=tcp:sql-reports-prod.database.windows.net,1433;Database=reports;Authentication=Active Directory Managed Identity;User Id={uuid4()};Encrypt=True",
    "Cache": "Data Source=cache.db"
  }},
  "PasswordPolicy": {{
    "RequiredLength": 12,
    "RequireNonAlphanumeric": true,
    "PasswordHistory": 5
  }}
}}
"""
    return "src/Hr.Intranet/Web.config", f"""<?xml version="1.0"?>
<configuration>
  <connectionStrings>
    <add name="HrDb" connectionString="Data Source=SQLHR01;Initial Catalog=HumanResources;Integrated Security=SSPI;" providerName="System.Data.SqlClient" />
  </connectionStrings>
  <appSettings>
    <add key="PasswordResetTokenLifetimeHours" value="4" />
    <add key="SecretQuestionEnabled" value="false" />
  </appSettings>
  <system.web>
    <authentication mode="Windows" />
    <machineKey validationKey="AutoGenerate,IsolateApps" decryptionKey="AutoGenerate,IsolateApps" validation="HMACSHA256" />
  </system.web>
</configuration>
"""


@case("azure-emulator-well-known-keys", "none", 3)
def _(v):
    if v == 0:
        return "src/Documents.Api/appsettings.Development.json", """{
  "Storage": {
    "_comment": "Azurite local emulator - well-known development account, see https://learn.microsoft.com/azure/storage/common/storage-use-azurite",
    "ConnectionString": "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;",
    "Container": "documents-dev"
  }
}
"""
    if v == 1:
        return "tests/Catalog.IntegrationTests/CosmosFixture.cs", """using Microsoft.Azure.Cosmos;

namespace Catalog.IntegrationTests;

public sealed class CosmosFixture : IAsyncLifetime
{
    // Cosmos DB Emulator: fixed, publicly documented key that only works against the local emulator.
    private const string EmulatorEndpoint = "https://localhost:8081/";
    private const string EmulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

    public CosmosClient Client { get; private set; } = default!;

    public async Task InitializeAsync()
    {
        Client = new CosmosClient(EmulatorEndpoint, EmulatorKey, new CosmosClientOptions
        {
            HttpClientFactory = () => new HttpClient(new HttpClientHandler
            {
                ServerCertificateCustomValidationCallback = HttpClientHandler.DangerousAcceptAnyServerCertificateValidator,
            }),
            ConnectionMode = ConnectionMode.Gateway,
        });
        await Client.CreateDatabaseIfNotExistsAsync("catalog-tests");
    }

    public Task DisposeAsync()
    {
        Client.Dispose();
        return Task.CompletedTask;
    }
}
"""
    return "src/main/resources/application-local.yml", """# docker compose up azurite  -> uses the Azurite default dev account
spring:
  cloud:
    azure:
      storage:
        blob:
          endpoint: http://127.0.0.1:10000/devstoreaccount1
          account-name: devstoreaccount1
          account-key: Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==
          container-name: exports-local
"""


@case("appinsights-instrumentation-ids", "none", 3)
def _(v):
    if v == 0:
        return "src/Shipping.Api/appsettings.json", f"""{{
  "ApplicationInsights": {{
    "ConnectionString": "InstrumentationKey={uuid4()};IngestionEndpoint=https://westeurope-5.in.applicationinsights.azure.com/;LiveEndpoint=https://westeurope.livediagnostics.monitor.azure.com/;ApplicationId={uuid4()}"
  }},
  "Logging": {{
    "ApplicationInsights": {{
      "LogLevel": {{ "Default": "Warning" }}
    }}
  }}
}}
"""
    if v == 1:
        return "src/main/resources/applicationinsights.json", f"""{{
  "connectionString": "InstrumentationKey={uuid4()};IngestionEndpoint=https://northeurope-2.in.applicationinsights.azure.com/",
  "role": {{ "name": "pricing-engine" }},
  "sampling": {{ "percentage": 25 }},
  "instrumentation": {{
    "logging": {{ "level": "WARN" }},
    "micrometer": {{ "enabled": true }}
  }}
}}
"""
    return "src/Web/wwwroot/telemetry.config.json", f"""{{
  "clientTelemetry": {{
    "instrumentationKey": "{uuid4()}",
    "enableAutoRouteTracking": true,
    "disableFetchTracking": false
  }},
  "tenantId": "{uuid4()}",
  "subscriptionId": "{uuid4()}"
}}
"""


@case("nuget-credentials-from-env", "none", 3)
def _(v):
    if v == 0:
        return "NuGet.config", f"""<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <clear />
    <add key="nuget.org" value="https://api.nuget.org/v3/index.json" />
    <add key="github" value="https://nuget.pkg.github.com/northwind/index.json" />
  </packageSources>
  <packageSourceCredentials>
    <github>
      <add key="Username" value="%GITHUB_ACTOR%" />
      <add key="ClearTextPassword" value="%GITHUB_TOKEN%" />
    </github>
  </packageSourceCredentials>
</configuration>
"""
    if v == 1:
        return "nuget.config", f"""<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <add key="internal" value="https://pkgs.dev.azure.com/contoso/_packaging/shared/nuget/v3/index.json" />
  </packageSources>
  <!-- credentials come from the Azure Artifacts Credential Provider (VSS_NUGET_EXTERNAL_FEED_ENDPOINTS) -->
  <trustedSigners>
    <repository name="nuget.org" serviceIndex="https://api.nuget.org/v3/index.json">
      <certificate fingerprint="{HX(64)}" hashAlgorithm="SHA256" allowUntrustedRoot="false" />
      <owners>microsoft;aspnet;nuget</owners>
    </repository>
  </trustedSigners>
</configuration>
"""
    return "src/Orders.Api/packages.lock.json", f"""{{
  "version": 1,
  "dependencies": {{
    "net8.0": {{
      "Microsoft.EntityFrameworkCore.SqlServer": {{
        "type": "Direct",
        "requested": "[8.0.6, )",
        "resolved": "8.0.6",
        "contentHash": "{b64bytes(64)}",
        "dependencies": {{
          "Microsoft.Data.SqlClient": "5.1.5",
          "Microsoft.EntityFrameworkCore.Relational": "8.0.6"
        }}
      }},
      "Serilog.AspNetCore": {{
        "type": "Direct",
        "requested": "[8.0.1, )",
        "resolved": "8.0.1",
        "contentHash": "{b64bytes(64)}"
      }},
      "Azure.Identity": {{
        "type": "Transitive",
        "resolved": "1.11.4",
        "contentHash": "{b64bytes(64)}"
      }}
    }}
  }}
}}
"""


@case("dotnet-usersecrets-id-and-launch", "none", 3)
def _(v):
    if v == 0:
        return "src/Payments.Api/Payments.Api.csproj", f"""<Project Sdk="Microsoft.NET.Sdk.Web">

  <PropertyGroup>
    <TargetFramework>net8.0</TargetFramework>
    <Nullable>enable</Nullable>
    <ImplicitUsings>enable</ImplicitUsings>
    <UserSecretsId>{uuid4()}</UserSecretsId>
    <ContainerImageName>payments-api</ContainerImageName>
  </PropertyGroup>

  <ItemGroup>
    <PackageReference Include="Microsoft.AspNetCore.Authentication.JwtBearer" Version="8.0.6" />
    <PackageReference Include="Microsoft.Extensions.Configuration.UserSecrets" Version="8.0.0" />
    <PackageReference Include="Stripe.net" Version="45.1.0" />
  </ItemGroup>

</Project>
"""
    if v == 1:
        return "src/Payments.Api/Properties/launchSettings.json", f"""{{
  "$schema": "https://json.schemastore.org/launchsettings.json",
  "profiles": {{
    "http": {{
      "commandName": "Project",
      "launchBrowser": true,
      "launchUrl": "swagger",
      "applicationUrl": "http://localhost:5087",
      "environmentVariables": {{
        "ASPNETCORE_ENVIRONMENT": "Development",
        "Stripe__SecretKey": "",
        "Jwt__Issuer": "https://localhost:5087",
        "DOTNET_USER_SECRETS_ID": "{uuid4()}"
      }}
    }},
    "IIS Express": {{
      "commandName": "IISExpress",
      "launchBrowser": true
    }}
  }},
  "iisSettings": {{
    "windowsAuthentication": false,
    "anonymousAuthentication": true,
    "iisExpress": {{ "applicationUrl": "http://localhost:18342", "sslPort": 44311 }}
  }}
}}
"""
    return "docs/local-setup.md", f"""# Local setup

Secrets are kept out of the repo using .NET user secrets:

```bash
cd src/Payments.Api
dotnet user-secrets init
dotnet user-secrets set "Stripe:SecretKey" "<your Stripe test secret key>"
dotnet user-secrets set "ConnectionStrings:PaymentsDb" "Server=localhost;Database=payments;User Id=sa;Password=<your local sa password>;TrustServerCertificate=True"
```

The values end up in `%APPDATA%\\Microsoft\\UserSecrets\\<UserSecretsId>\\secrets.json`
(`~/.microsoft/usersecrets/<UserSecretsId>/secrets.json` on Linux/macOS) and are never committed.

| Setting | Where it comes from |
|---|---|
| `Stripe:SecretKey` | user secrets (dev), Key Vault `payments-stripe-secret` (prod) |
| `Jwt:SigningKey` | user secrets (dev), Key Vault `payments-jwt-signing-key` (prod) |
"""


@case("password-hash-seed-data", "none", 4)
def _(v):
    if v == 0:
        return "src/main/resources/db/migration/V3__seed_admin_users.sql", f"""-- Seed initial back-office accounts. Passwords are bcrypt hashes; users must reset on first login.
INSERT INTO app_user (id, email, password_hash, role, must_reset_password, created_at) VALUES
  ('{uuid4()}', 'ops-admin@northwind.io', '{bcrypt()}', 'ADMIN', true, now()),
  ('{uuid4()}', 'support-lead@northwind.io', '{bcrypt()}', 'SUPPORT', true, now()),
  ('{uuid4()}', 'finance@northwind.io', '{bcrypt()}', 'FINANCE', true, now());
"""
    if v == 1:
        return "src/Identity/Data/SeedData.cs", f"""using Microsoft.AspNetCore.Identity;
using Microsoft.EntityFrameworkCore;

namespace Identity.Data;

public static class SeedData
{{
    public static void Seed(ModelBuilder builder)
    {{
        builder.Entity<IdentityUser>().HasData(new IdentityUser
        {{
            Id = "{uuid4()}",
            UserName = "admin@contoso.com",
            NormalizedUserName = "ADMIN@CONTOSO.COM",
            Email = "admin@contoso.com",
            NormalizedEmail = "ADMIN@CONTOSO.COM",
            EmailConfirmed = true,
            PasswordHash = "{aspnet_identity_hash()}",
            SecurityStamp = "{rs(UP + '234567', 32)}",
            ConcurrencyStamp = "{uuid4()}",
        }});
    }}
}}
"""
    if v == 2:
        return "internal/users/fixtures_test.go", f"""package users

import "testing"

// Stored verifiers only (argon2id); plaintext is never kept in fixtures.
var seedUsers = []User{{
\t{{ID: 1, Email: "alice@lumen.dev", PasswordHash: "{argon2()}"}},
\t{{ID: 2, Email: "bob@lumen.dev", PasswordHash: "{argon2()}"}},
}}

func TestSeedUsersHaveHashes(t *testing.T) {{
\tfor _, u := range seedUsers {{
\t\tif len(u.PasswordHash) < 60 {{
\t\t\tt.Errorf("user %d: hash too short", u.ID)
\t\t}}
\t}}
}}
"""
    return "src/main/resources/application.yml", f"""spring:
  security:
    user:
      name: actuator
      password: "{{bcrypt}}{bcrypt()}"
      roles: ACTUATOR
management:
  endpoints:
    web:
      exposure:
        include: health,info,metrics
"""

# =========================================================================
# Go -- hard negatives
# =========================================================================
@case("go-sum-module-checksums", "none", 3)
def _(v):
    mods = ["github.com/spf13/viper v1.19.0", "github.com/jackc/pgx/v5 v5.6.0", "github.com/go-chi/chi/v5 v5.0.14",
            "golang.org/x/crypto v0.24.0", "github.com/golang-jwt/jwt/v5 v5.2.1", "github.com/rs/zerolog v1.33.0",
            "github.com/stretchr/testify v1.9.0", "google.golang.org/grpc v1.64.0", "github.com/redis/go-redis/v9 v9.5.3"]
    if v < 2:
        sel = R.sample(mods, 6)
        lines = []
        for m in sel:
            lines.append(f"{m} h1:{b64bytes(32)}")
            lines.append(f"{m.split()[0]} {m.split()[1]}/go.mod h1:{b64bytes(32)}")
        return "go.sum", "\n".join(lines) + "\n"
    return "tools/checksums.txt", "\n".join(f"{sha256hex()}  edge-proxy_{ver}_{os_}_{arch}.tar.gz" for ver in ["1.8.2"]
                                        for os_ in ["linux", "darwin"] for arch in ["amd64", "arm64"]) + "\n"


@case("go-test-published-vectors", "none", 4)
def _(v):
    if v == 0:
        k1 = b"\x0b" * 20
        m1 = hmac.new(k1, b"Hi There", hashlib.sha256).hexdigest()
        m2 = hmac.new(b"Jefe", b"what do ya want for nothing?", hashlib.sha256).hexdigest()
        return "internal/sign/hmac_test.go", f"""package sign

import (
\t"encoding/hex"
\t"testing"
)

// Test cases 1 and 2 from RFC 4231 (HMAC-SHA256).
var rfc4231 = []struct {{
\tkey, data, want string
}}{{
\t{{"{'0b' * 20}", "{b'Hi There'.hex()}", "{m1}"}},
\t{{"{b'Jefe'.hex()}", "{b'what do ya want for nothing?'.hex()}", "{m2}"}},
}}

func TestHMACSHA256RFC4231(t *testing.T) {{
\tfor i, tc := range rfc4231 {{
\t\tkey, _ := hex.DecodeString(tc.key)
\t\tdata, _ := hex.DecodeString(tc.data)
\t\tif got := hex.EncodeToString(Sum(key, data)); got != tc.want {{
\t\t\tt.Errorf("case %d: got %s want %s", i+1, got, tc.want)
\t\t}}
\t}}
}}
"""
    if v == 1:
        return "internal/crypto/aes_test.go", """package crypto

import (
\t"bytes"
\t"crypto/aes"
\t"encoding/hex"
\t"testing"
)

// FIPS-197 Appendix C.1 (AES-128) known-answer test.
func TestAES128KnownAnswer(t *testing.T) {
\tkey, _ := hex.DecodeString("000102030405060708090a0b0c0d0e0f")
\tpt, _ := hex.DecodeString("00112233445566778899aabbccddeeff")
\twant, _ := hex.DecodeString("69c4e0d86a7b0430d8cdb78070b4c55a")
\tblk, err := aes.NewCipher(key)
\tif err != nil {
\t\tt.Fatal(err)
\t}
\tgot := make([]byte, 16)
\tblk.Encrypt(got, pt)
\tif !bytes.Equal(got, want) {
\t\tt.Fatalf("got %x", got)
\t}
}
"""
    if v == 2:
        d1 = hashlib.sha256(b"abc").hexdigest()
        d2 = hashlib.sha256(b"").hexdigest()
        return "pkg/digest/digest_test.go", f"""package digest

import "testing"

func TestSHA256Vectors(t *testing.T) {{
\tcases := map[string]string{{
\t\t"":    "{d2}",
\t\t"abc": "{d1}",
\t}}
\tfor in, want := range cases {{
\t\tif got := Hex([]byte(in)); got != want {{
\t\t\tt.Errorf("Hex(%q) = %s, want %s", in, got, want)
\t\t}}
\t}}
}}
"""
    return "internal/webhook/verify_test.go", f"""package webhook

import "testing"

func TestVerifyRejectsTamperedBody(t *testing.T) {{
\tsecret := []byte("test-secret-do-not-use")
\tbody := []byte(`{{"id":"evt_{rs(LO + DG, 12)}","type":"invoice.paid"}}`)
\tsig := Sign(secret, body)
\tif !Verify(secret, body, sig) {{
\t\tt.Fatal("valid signature rejected")
\t}}
\tbody[5] ^= 0xff
\tif Verify(secret, body, sig) {{
\t\tt.Fatal("tampered body accepted")
\t}}
}}
"""


@case("go-ldflags-version-metadata", "none", 3)
def _(v):
    if v == 0:
        return "Makefile", f"""APP      := ledger-api
VERSION  ?= $(shell git describe --tags --always)
COMMIT   ?= $(shell git rev-parse HEAD)
DATE     := $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
PKG      := github.com/northwind/ledger-api/internal/buildinfo

LDFLAGS  := -s -w -X $(PKG).Version=$(VERSION) -X $(PKG).Commit=$(COMMIT) -X $(PKG).Date=$(DATE)

build:
\tgo build -ldflags "$(LDFLAGS)" -o bin/$(APP) ./cmd/$(APP)

docker:
\tdocker build --build-arg VERSION=$(VERSION) -t ghcr.io/northwind/$(APP):$(VERSION) .
"""
    if v == 1:
        return "internal/buildinfo/buildinfo.go", f"""package buildinfo

// Populated at build time via -ldflags "-X ...". Defaults are for `go run`.
var (
\tVersion   = "v2.7.1"
\tCommit    = "{sha1hex()}"
\tTreeHash  = "{sha1hex()}"
\tBuildID   = "{hx(32)}"
\tDate      = "2024-06-18T09:41:07Z"
)
"""
    return "scripts/build.sh", f"""#!/usr/bin/env bash
set -euo pipefail

GIT_SHA="${{GIT_SHA:-$(git rev-parse HEAD)}}"
# last release built from: {sha1hex()}
go build \\
  -ldflags "-X main.commit=${{GIT_SHA}} -X main.apiKeyHeader=X-Api-Key -X main.secretsPath=/var/run/secrets/app" \\
  -o dist/gateway ./cmd/gateway
sha256sum dist/gateway > dist/gateway.sha256
"""


@case("go-config-struct-env-tags", "none", 4)
def _(v):
    if v == 0:
        return "internal/config/config.go", """package config

import (
\t"time"

\t"github.com/kelseyhightower/envconfig"
)

type Config struct {
\tHTTPAddr        string        `envconfig:"HTTP_ADDR" default:":8080"`
\tDatabaseURL     string        `envconfig:"DATABASE_URL" required:"true"`
\tDatabasePassword string       `envconfig:"DATABASE_PASSWORD" required:"true"`
\tJWTSecret       string        `envconfig:"JWT_SECRET" required:"true"`
\tJWTIssuer       string        `envconfig:"JWT_ISSUER" default:"https://auth.lumen.dev/"`
\tTokenTTL        time.Duration `envconfig:"TOKEN_TTL" default:"15m"`
\tAPIKeyHeader    string        `envconfig:"API_KEY_HEADER" default:"X-API-Key"`
}

func Load() (Config, error) {
\tvar c Config
\terr := envconfig.Process("", &c)
\treturn c, err
}
"""
    if v == 1:
        return "configs/config.example.yaml", """# Copy to config.yaml and fill in. Never commit config.yaml.
server:
  addr: ":8080"
database:
  dsn: "postgres://USER:PASSWORD@localhost:5432/inventory?sslmode=disable"
auth:
  jwt_secret: "REPLACE_ME"
  issuer: "https://auth.example.com/"
stripe:
  secret_key: "sk_live_xxxxxxxxxxxxxxxxxxxxxxxx"
  webhook_secret: "whsec_xxxxxxxxxxxxxxxx"
"""
    if v == 2:
        return "internal/config/secrets.go", """package config

import (
\t"context"
\t"fmt"

\tsecretmanager "cloud.google.com/go/secretmanager/apiv1"
\t"cloud.google.com/go/secretmanager/apiv1/secretmanagerpb"
)

const (
\tdbPasswordSecret = "projects/northwind-prod/secrets/ledger-db-password/versions/latest"
\tstripeKeySecret  = "projects/northwind-prod/secrets/stripe-secret-key/versions/latest"
)

func access(ctx context.Context, c *secretmanager.Client, name string) (string, error) {
\tres, err := c.AccessSecretVersion(ctx, &secretmanagerpb.AccessSecretVersionRequest{Name: name})
\tif err != nil {
\t\treturn "", fmt.Errorf("access %s: %w", name, err)
\t}
\treturn string(res.Payload.Data), nil
}
"""
    return "config.toml", """[http]
listen = "0.0.0.0:9000"
api_key_header = "X-API-Key"

[postgres]
host = "localhost"
port = 5432
user = "pricing"
password_file = "/run/secrets/postgres_password"
dbname = "pricing"

[auth]
token_url = "https://auth.wingtip.net/oauth/token"
client_id = "pricing-engine"
client_secret_env = "PRICING_CLIENT_SECRET"
"""


# =========================================================================
# Rust -- hard negatives
# =========================================================================
@case("rust-cargo-lock-checksums", "none", 3)
def _(v):
    crates = [("serde", "1.0.203"), ("tokio", "1.38.0"), ("axum", "0.7.5"), ("sqlx", "0.7.4"), ("reqwest", "0.12.5"),
              ("jsonwebtoken", "9.3.0"), ("ring", "0.17.8"), ("tracing", "0.1.40"), ("uuid", "1.9.1")]
    if v < 2:
        sel = R.sample(crates, 5)
        parts = ["# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\nversion = 3\n"]
        for n, ver in sel:
            parts.append(f"""[[package]]
name = "{n}"
version = "{ver}"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "{sha256hex()}"
""")
        return "Cargo.lock", "\n".join(parts)
    return "Cargo.toml", f"""[package]
name = "lumen-api"
version = "0.4.2"
edition = "2021"

[dependencies]
axum = "0.7"
tokio = {{ version = "1", features = ["full"] }}
jsonwebtoken = "9"
secrecy = {{ version = "0.8", features = ["serde"] }}
internal-auth = {{ git = "https://github.com/lumen-dev/internal-auth", rev = "{sha1hex()}" }}

[profile.release]
lto = true
"""


@case("rust-test-published-vectors", "none", 3)
def _(v):
    if v == 0:
        return "tests/jws_rfc7515.rs", """//! Appendix A.1 of RFC 7515: the HMAC SHA-256 example key and JWS from the spec.
use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
use ring::hmac;

const RFC7515_A1_KEY: &str =
    "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow";
const SIGNING_INPUT: &str = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ";
const EXPECTED_SIG: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

#[test]
fn hs256_matches_rfc7515_appendix_a1() {
    let key = URL_SAFE_NO_PAD.decode(RFC7515_A1_KEY).unwrap();
    let k = hmac::Key::new(hmac::HMAC_SHA256, &key);
    let tag = hmac::sign(&k, SIGNING_INPUT.as_bytes());
    assert_eq!(URL_SAFE_NO_PAD.encode(tag.as_ref()), EXPECTED_SIG);
}
"""
    if v == 1:
        k1 = b"\x0b" * 20
        m = hmac.new(k1, b"Hi There", hashlib.sha512).hexdigest()
        return "src/mac.rs", f"""use hmac::{{Hmac, Mac}};
use sha2::Sha512;

pub fn tag(key: &[u8], msg: &[u8]) -> Vec<u8> {{
    let mut m = Hmac::<Sha512>::new_from_slice(key).expect("any key length");
    m.update(msg);
    m.finalize().into_bytes().to_vec()
}}

#[cfg(test)]
mod tests {{
    use super::*;

    /// RFC 4231 test case 1.
    #[test]
    fn rfc4231_case1() {{
        let key = [0x0bu8; 20];
        let expected = hex::decode("{m}").unwrap();
        assert_eq!(tag(&key, b"Hi There"), expected);
    }}
}}
"""
    return "src/crypto/chacha.rs", """#[cfg(test)]
mod tests {
    use chacha20poly1305::{aead::Aead, ChaCha20Poly1305, KeyInit, Nonce};

    // RFC 8439 section 2.8.2 AEAD test vector (key, nonce).
    const KEY: [u8; 32] = [
        0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x8b, 0x8c, 0x8d, 0x8e, 0x8f,
        0x90, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0x9b, 0x9c, 0x9d, 0x9e, 0x9f,
    ];
    const NONCE: [u8; 12] = [0x07, 0x00, 0x00, 0x00, 0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47];

    #[test]
    fn roundtrip_with_rfc8439_key() {
        let c = ChaCha20Poly1305::new_from_slice(&KEY).unwrap();
        let n = Nonce::from_slice(&NONCE);
        let ct = c.encrypt(n, b"Ladies and Gentlemen of the class of '99".as_ref()).unwrap();
        assert_eq!(c.decrypt(n, ct.as_ref()).unwrap(), b"Ladies and Gentlemen of the class of '99");
    }
}
"""


@case("rust-config-env-references", "none", 3)
def _(v):
    if v == 0:
        return "config/base.toml", """[application]
port = 8000
hmac_secret_env = "APP_HMAC_SECRET"

[database]
host = "127.0.0.1"
port = 5432
username = "postgres"
# password comes from APP_DATABASE__PASSWORD
database_name = "newsletter"
require_ssl = false

[email_client]
base_url = "http://localhost:4010"
sender_email = "test@example.com"
authorization_token = "${POSTMARK_TOKEN}"
"""
    if v == 1:
        return "src/settings.rs", """use secrecy::{ExposeSecret, Secret};
use serde::Deserialize;

#[derive(Deserialize, Clone)]
pub struct DatabaseSettings {
    pub username: String,
    pub password: Secret<String>,
    pub host: String,
    pub port: u16,
    pub database_name: String,
}

impl DatabaseSettings {
    pub fn connection_string(&self) -> Secret<String> {
        Secret::new(format!(
            "postgres://{}:{}@{}:{}/{}",
            self.username,
            self.password.expose_secret(),
            self.host,
            self.port,
            self.database_name
        ))
    }
}

pub fn get() -> Result<DatabaseSettings, config::ConfigError> {
    config::Config::builder()
        .add_source(config::Environment::with_prefix("APP").separator("__"))
        .build()?
        .get("database")
}
"""
    return ".cargo/config.toml", """[registries.acme]
index = "sparse+https://cargo.acme.internal/api/v1/crates/"
credential-provider = ["cargo:token-from-stdout", "vault", "read", "-field=token", "secret/ci/cargo-acme"]

[registry]
global-credential-providers = ["cargo:token"]

[env]
DATABASE_URL = "postgres://postgres@localhost:5432/lumen_dev"
"""

# =========================================================================
# Scala / Play / Kotlin / Android -- hard negatives
# =========================================================================
@case("play-hocon-env-substitution", "none", 4)
def _(v):
    if v == 0:
        return "conf/application.conf", """play.http.secret.key = "changeme"
play.http.secret.key = ${?APPLICATION_SECRET}

play.filters.enabled += play.filters.hosts.AllowedHostsFilter
play.filters.hosts.allowed = ["."]

db.default {
  driver = org.postgresql.Driver
  url = "jdbc:postgresql://localhost:5432/shop"
  url = ${?DATABASE_URL}
  username = "shop"
  password = ${?DATABASE_PASSWORD}
}
"""
    if v == 1:
        return "src/main/resources/application.conf", """ktor {
  deployment {
    port = 8080
    port = ${?PORT}
    sslPort = 8443
  }
  security {
    ssl {
      keyStore = /etc/ktor/keystore.jks
      keyAlias = ktor-tls
      keyStorePassword = ${KEYSTORE_PASSWORD}
      privateKeyPassword = ${KEY_PASSWORD}
    }
  }
}

jwt {
  issuer = "https://crm.globex.com/"
  audience = "crm-api"
  realm = "crm"
  secret = ${JWT_SECRET}
}
"""
    if v == 2:
        return "conf/akka-persistence.conf", """akka.persistence.journal.plugin = "jdbc-journal"

slick {
  profile = "slick.jdbc.PostgresProfile$"
  db {
    host = "localhost"
    host = ${?DB_HOST}
    url = "jdbc:postgresql://"${slick.db.host}":5432/events?reWriteBatchedInserts=true"
    user = "events"
    user = ${?DB_USER}
    password = ${?DB_PASSWORD}
    driver = "org.postgresql.Driver"
    numThreads = 5
    maxConnections = 5
  }
}
"""
    return "src/main/scala/io/lumen/config/AppConfig.scala", """package io.lumen.config

import pureconfig._
import pureconfig.generic.derivation.default._

final case class DbConfig(url: String, user: String, passwordEnv: String) derives ConfigReader
final case class AuthConfig(issuer: String, audience: String, secretName: String, tokenUrl: String) derives ConfigReader
final case class AppConfig(db: DbConfig, auth: AuthConfig) derives ConfigReader

object AppConfig {
  val defaultAuth: AuthConfig = AuthConfig(
    issuer = "https://auth.lumen.dev/",
    audience = "lumen-events",
    secretName = "lumen-events/jwt-signing-key",
    tokenUrl = "https://auth.lumen.dev/oauth/token"
  )

  def load(): AppConfig = ConfigSource.default.loadOrThrow[AppConfig]

  def dbPassword(c: DbConfig): String =
    sys.env.getOrElse(c.passwordEnv, throw new IllegalStateException(s"${c.passwordEnv} not set"))
}
"""


@case("android-firebase-public-config", "none", 3)
def _(v):
    proj = pick("courier-app-prod", "lumen-wallet", "fabrikam-field")
    if v == 0:
        return "app/google-services.json", f"""{{
  "project_info": {{
    "project_number": "{digits(12)}",
    "project_id": "{proj}",
    "storage_bucket": "{proj}.appspot.com"
  }},
  "client": [
    {{
      "client_info": {{
        "mobilesdk_app_id": "1:{digits(12)}:android:{hx(22)}",
        "android_client_info": {{ "package_name": "com.tailspin.courier" }}
      }},
      "oauth_client": [],
      "api_key": [
        {{ "current_key": "{google_key()}" }}
      ],
      "services": {{
        "appinvite_service": {{ "other_platform_oauth_client": [] }}
      }}
    }}
  ],
  "configuration_version": "1"
}}
"""
    if v == 1:
        return "app/src/main/res/values/google_services.xml", f"""<?xml version="1.0" encoding="utf-8"?>
<resources>
    <!-- Firebase client config (public identifiers; access is enforced by Security Rules and App Check) -->
    <string name="gcm_defaultSenderId" translatable="false">{digits(12)}</string>
    <string name="google_app_id" translatable="false">1:{digits(12)}:android:{hx(22)}</string>
    <string name="google_api_key" translatable="false">{google_key()}</string>
    <string name="google_storage_bucket" translatable="false">{proj}.appspot.com</string>
    <string name="project_id" translatable="false">{proj}</string>
    <string name="default_web_client_id" translatable="false">{digits(12)}-{rs(LO + DG, 32)}.apps.googleusercontent.com</string>
</resources>
"""
    return "app/src/main/AndroidManifest.xml", f"""<?xml version="1.0" encoding="utf-8"?>
<manifest xmlns:android="http://schemas.android.com/apk/res/android">
    <uses-permission android:name="android.permission.INTERNET" />
    <application
        android:name=".FieldApp"
        android:label="@string/app_name"
        android:icon="@mipmap/ic_launcher">
        <!-- Maps SDK key: restricted in Cloud Console to package com.fabrikam.field + release cert SHA-1 -->
        <meta-data
            android:name="com.google.android.geo.API_KEY"
            android:value="@string/maps_api_key" />
        <meta-data
            android:name="com.google.android.gms.version"
            android:value="@integer/google_play_services_version" />
        <meta-data
            android:name="io.sentry.dsn"
            android:value="https://{hx(32)}@o{R.randint(100000, 999999)}.ingest.sentry.io/{R.randint(1000000, 9999999)}" />
        <activity android:name=".MainActivity" android:exported="true">
            <intent-filter>
                <action android:name="android.intent.action.MAIN" />
                <category android:name="android.intent.category.LAUNCHER" />
            </intent-filter>
        </activity>
    </application>
</manifest>
"""


@case("android-buildconfig-from-local-properties", "none", 3)
def _(v):
    if v == 0:
        return "app/build.gradle.kts", """import java.util.Properties

val localProps = Properties().apply {
    val f = rootProject.file("local.properties")
    if (f.exists()) f.inputStream().use(::load)
}

android {
    namespace = "io.lumen.wallet"
    defaultConfig {
        buildConfigField("String", "API_BASE_URL", "\\"https://api.lumen.dev/\\"")
        buildConfigField("String", "MAPS_API_KEY", "\\"${localProps.getProperty("MAPS_API_KEY", "")}\\"")
        buildConfigField("String", "SENTRY_ENV", "\\"production\\"")
    }
    buildFeatures { buildConfig = true }
}
"""
    if v == 1:
        return "app/src/main/res/values/strings.xml", f"""<?xml version="1.0" encoding="utf-8"?>
<resources>
    <string name="app_name">Courier</string>
    <string name="login_password_hint">Password</string>
    <string name="login_forgot_password">Forgot password?</string>
    <string name="error_invalid_api_key">Your API key is invalid or expired.</string>
    <string name="settings_api_key_title">API key</string>
    <string name="settings_api_key_summary">Paste the key from your dashboard (starts with cr_live_)</string>
    <string name="token_expired">Session expired, please sign in again</string>
    <string name="secret_mode_label">Secret mode</string>
    <string name="facebook_app_id" translatable="false">{digits(15)}</string>
    <string name="fb_login_protocol_scheme" translatable="false">fb{digits(15)}</string>
</resources>
"""
    return "local.properties.example", """## Copy to local.properties (git-ignored) and fill in.
sdk.dir=/Users/you/Library/Android/sdk
MAPS_API_KEY=<your restricted Maps SDK key>
SIGNING_STORE_PASSWORD=
SIGNING_KEY_PASSWORD=
"""


@case("public-key-certificate-material", "none", 4)
def _(v):
    if v == 0:
        return "src/main/resources/keys/jwt-verify.pub.pem", pem_public()
    if v == 1:
        cert = pem_cert().rstrip("\n").replace("\n", "\n        ")
        return "src/main/resources/application.yml", f"""spring:
  security:
    saml2:
      relyingparty:
        registration:
          okta:
            assertingparty:
              metadata-uri: https://northwind.okta.com/app/{rs(AN, 20)}/sso/saml/metadata
              verification:
                credentials:
                  - certificate-location: classpath:saml/okta-idp.crt
app:
  partner:
    ca-certificate: |
        {cert}
"""
    if v == 2:
        return "internal/auth/keys.go", f"""package auth

import (
\t"crypto/x509"
\t"encoding/pem"
)

// Public half of the token-service signing key; the private key lives in KMS.
const verifyKeyPEM = `{pem_public()}`

func ParseVerifyKey() (any, error) {{
\tblk, _ := pem.Decode([]byte(verifyKeyPEM))
\treturn x509.ParsePKIXPublicKey(blk.Bytes)
}}
"""
    return "src/test/resources/certs/partner-ca.crt", pem_cert()


@case("publishable-client-side-keys", "none", 4)
def _(v):
    if v == 0:
        return "src/main/resources/application.yml", f"""stripe:
  publishable-key: {stripe_pk()}
  secret-key: ${{STRIPE_SECRET_KEY}}
checkout:
  success-url: https://shop.wingtip.net/checkout/success
  cancel-url: https://shop.wingtip.net/cart
"""
    if v == 1:
        return "src/main/resources/application.properties", f"""sentry.dsn=https://{hx(32)}@o{R.randint(100000, 999999)}.ingest.us.sentry.io/{R.randint(1000000, 9999999)}
sentry.environment=production
sentry.traces-sample-rate=0.1
sentry.send-default-pii=false
launchdarkly.client-side-id={hx(24)}
launchdarkly.sdk-key=${{LD_SDK_KEY}}
"""
    if v == 2:
        return "src/Storefront/appsettings.json", f"""{{
  "Auth0": {{
    "Domain": "wingtip.eu.auth0.com",
    "ClientId": "{rs(AN, 32)}",
    "Audience": "https://api.wingtip.net"
  }},
  "GoogleMaps": {{
    "_note": "browser key, HTTP-referrer restricted to https://*.wingtip.net/*",
    "BrowserKey": "{google_key()}"
  }},
  "Stripe": {{
    "PublishableKey": "{stripe_pk()}"
  }}
}}
"""
    return "web/src/main/resources/static/js/config.js", f"""// Injected into the storefront bundle; all of these are public, client-side identifiers.
window.APP_CONFIG = {{
  firebase: {{
    apiKey: "{google_key()}",
    authDomain: "wingtip-shop.firebaseapp.com",
    projectId: "wingtip-shop",
    storageBucket: "wingtip-shop.appspot.com",
    messagingSenderId: "{digits(12)}",
    appId: "1:{digits(12)}:web:{hx(22)}"
  }},
  stripePublishableKey: "{stripe_pk()}",
  algoliaAppId: "{rs(UP + DG, 10)}",
  algoliaSearchOnlyKey: "{hx(32)}"
}};
"""

# =========================================================================
# Cross-ecosystem hard negatives
# =========================================================================
@case("redacted-and-placeholder-docs", "none", 4)
def _(v):
    if v == 0:
        return "docs/runbooks/db-failover.md", f"""# Runbook: ledger DB failover

1. Confirm replica lag: `SELECT now() - pg_last_xact_replay_timestamp();`
2. Promote the replica from the console or `pg_ctl promote`.
3. Update the Spring config in the config repo:

```properties
spring.datasource.url=jdbc:postgresql://ledger-db-b.us-east-2.rds.amazonaws.com:5432/ledger
spring.datasource.username=ledger_app
spring.datasource.password=********
```

The password itself is in Vault at `secret/ledger-api/prod` (key `db-password`), do not paste it in tickets.

Example log line after restart (values are redacted by the logging mask):

```
2024-06-11 04:12:09 INFO  HikariDataSource - ledger-pool - Start completed. url=jdbc:postgresql://ledger-db-b...:5432/ledger user=ledger_app password=[REDACTED]
```
"""
    if v == 1:
        return "README.md", f"""# payments-gateway

## Configuration

| Variable | Description | Example |
|---|---|---|
| `STRIPE_SECRET_KEY` | Stripe secret key for the account | `sk_live_...` (starts with `sk_live_`, 107 chars) |
| `STRIPE_WEBHOOK_SECRET` | Signing secret of the webhook endpoint | `whsec_<32 chars>` |
| `AWS_ACCESS_KEY_ID` | Only for local runs; prod uses IRSA | `AKIA****************` |
| `DB_PASSWORD` | Postgres password | `<from 1Password: payments-db>` |

Run locally:

```bash
export STRIPE_SECRET_KEY=sk_test_your_key_here
export DB_PASSWORD=changeme
./mvnw spring-boot:run -Dspring-boot.run.profiles=local
```
"""
    if v == 2:
        return "src/main/resources/application-example.yml", """# Template - copy to application-local.yml
spring:
  datasource:
    url: jdbc:mysql://localhost:3306/catalog
    username: catalog
    password: CHANGE_ME
  mail:
    password: <smtp-password>
aws:
  access-key-id: AKIAXXXXXXXXXXXXXXXX
  secret-access-key: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
slack:
  webhook-url: https://hooks.slack.com/services/TXXXXXXXX/BXXXXXXXX/XXXXXXXXXXXXXXXXXXXXXXXX
"""
    return "src/Orders.Api/appsettings.Template.json", """{
  "ConnectionStrings": {
    "OrdersDb": "Server=<host>;Database=Orders;User ID=<user>;Password=<password>;Encrypt=True"
  },
  "Stripe": {
    "SecretKey": "{{STRIPE_SECRET_KEY}}",
    "WebhookSecret": "{{STRIPE_WEBHOOK_SECRET}}"
  },
  "SendGrid": {
    "ApiKey": "your_api_key_here"
  },
  "Jwt": {
    "Key": "REPLACE_WITH_64_RANDOM_CHARS"
  }
}
"""


@case("log-config-masking-and-env", "none", 3)
def _(v):
    if v == 0:
        return "src/main/resources/logback-spring.xml", """<configuration>
  <springProperty scope="context" name="logzioToken" source="logzio.token"/>
  <conversionRule conversionWord="masked" converterClass="com.acme.logging.MaskingConverter"/>

  <appender name="JSON" class="ch.qos.logback.core.ConsoleAppender">
    <encoder class="net.logstash.logback.encoder.LoggingEventCompositeJsonEncoder">
      <providers>
        <timestamp/>
        <logLevel/>
        <loggerName/>
        <message/>
        <mdc/>
      </providers>
      <jsonGeneratorDecorator class="net.logstash.logback.mask.MaskingJsonGeneratorDecorator">
        <defaultMask>****</defaultMask>
        <path>password</path>
        <path>secret</path>
        <path>authorization</path>
        <value>(?i)(api[_-]?key|token|password)=([^&amp;\\s]+)</value>
      </jsonGeneratorDecorator>
    </encoder>
  </appender>

  <appender name="LOGZIO" class="io.logz.logback.LogzioLogbackAppender">
    <token>${logzioToken}</token>
    <logzioUrl>https://listener-eu.logz.io:8071</logzioUrl>
  </appender>

  <root level="INFO">
    <appender-ref ref="JSON"/>
    <appender-ref ref="LOGZIO"/>
  </root>
</configuration>
"""
    if v == 1:
        return "src/main/resources/log4j2.xml", """<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="WARN">
  <Appenders>
    <SMTP name="Mail" subject="billing-api error" to="${env:ALERT_EMAIL}" from="billing@northwind.io"
          smtpHost="${env:SMTP_HOST}" smtpPort="587" smtpUsername="${env:SMTP_USER}" smtpPassword="${env:SMTP_PASSWORD}">
      <ThresholdFilter level="ERROR" onMatch="ACCEPT" onMismatch="DENY"/>
    </SMTP>
    <Http name="Datadog" url="https://http-intake.logs.datadoghq.eu/api/v2/logs">
      <Property name="DD-API-KEY" value="${env:DD_API_KEY}"/>
      <JsonLayout compact="true" eventEol="true"/>
    </Http>
  </Appenders>
  <Loggers>
    <Root level="info">
      <AppenderRef ref="Mail"/>
      <AppenderRef ref="Datadog"/>
    </Root>
  </Loggers>
</Configuration>
"""
    return "src/main/java/com/acme/logging/MaskingConverter.java", """package com.acme.logging;

import ch.qos.logback.classic.pattern.MessageConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import java.util.regex.Pattern;

public class MaskingConverter extends MessageConverter {

    private static final Pattern SECRETS = Pattern.compile(
        "(?i)(password|passwd|pwd|secret|api[_-]?key|access[_-]?token|client_secret)\\\\s*[=:]\\\\s*([^\\\\s,;&]+)");
    private static final Pattern BEARER = Pattern.compile("(?i)Bearer\\\\s+[A-Za-z0-9._~+/-]+=*");
    private static final Pattern AWS_KEY_ID = Pattern.compile("\\\\b(AKIA|ASIA)[A-Z0-9]{16}\\\\b");

    @Override
    public String convert(ILoggingEvent event) {
        String msg = super.convert(event);
        msg = SECRETS.matcher(msg).replaceAll("$1=****");
        msg = BEARER.matcher(msg).replaceAll("Bearer ****");
        return AWS_KEY_ID.matcher(msg).replaceAll("$1****************");
    }
}
"""


@case("dummy-test-credentials-labelled", "none", 4)
def _(v):
    if v == 0:
        return "src/test/java/com/northwind/orders/security/JwtServiceTest.java", """package com.northwind.orders.security;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class JwtServiceTest {

    // Dummy key for unit tests only - not used in any environment.
    private static final String FAKE_SIGNING_KEY = "test-only-signing-key-not-a-real-secret-000000";

    private final JwtService service = new JwtService(FAKE_SIGNING_KEY, "https://auth.test", "orders-api");

    @Test
    void roundTrip() {
        String token = service.issue("user-123");
        assertThat(service.verify(token).getSubject()).isEqualTo("user-123");
    }
}
"""
    if v == 1:
        return "tests/Billing.Tests/StripeWebhookTests.cs", """using Xunit;

namespace Billing.Tests;

public class StripeWebhookTests
{
    // Fake values: the handler is exercised with a locally computed signature.
    private const string DummyWebhookSecret = "whsec_dummy_for_tests";
    private const string DummyApiKey = "sk_test_dummy";

    [Fact]
    public void RejectsWrongSignature()
    {
        var handler = new StripeWebhookHandler(DummyApiKey, DummyWebhookSecret);
        var ok = handler.Verify("{\\"id\\":\\"evt_test\\"}", "t=1700000000,v1=deadbeef");
        Assert.False(ok);
    }
}
"""
    if v == 2:
        return "src/test/resources/application-test.yml", """# Test profile - Testcontainers overrides the datasource at runtime.
spring:
  datasource:
    url: jdbc:tc:postgresql:16-alpine:///orders
    username: test
    password: test
  security:
    oauth2:
      client:
        registration:
          github:
            client-id: dummy-client-id
            client-secret: dummy-client-secret
app:
  jwt:
    secret: dummy-test-secret-dummy-test-secret-dummy-test
"""
    return "internal/auth/middleware_test.go", """package auth

import (
\t"net/http"
\t"net/http/httptest"
\t"testing"
)

const fakeAPIKey = "fake-api-key-for-tests"

func TestMiddlewareAcceptsConfiguredKey(t *testing.T) {
\th := RequireAPIKey(fakeAPIKey)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
\t\tw.WriteHeader(http.StatusNoContent)
\t}))
\treq := httptest.NewRequest(http.MethodGet, "/v1/items", nil)
\treq.Header.Set("X-API-Key", fakeAPIKey)
\trec := httptest.NewRecorder()
\th.ServeHTTP(rec, req)
\tif rec.Code != http.StatusNoContent {
\t\tt.Fatalf("status %d", rec.Code)
\t}
}
"""


@case("kafka-jaas-env-placeholder", "none", 3)
def _(v):
    if v == 0:
        return "src/main/resources/application.yml", """spring:
  kafka:
    bootstrap-servers: ${KAFKA_BOOTSTRAP_SERVERS}
    properties:
      security.protocol: SASL_SSL
      sasl.mechanism: PLAIN
      sasl.jaas.config: org.apache.kafka.common.security.plain.PlainLoginModule required username="${KAFKA_API_KEY}" password="${KAFKA_API_SECRET}";
    consumer:
      group-id: billing-api
"""
    if v == 1:
        return "config/kafka-client.properties", """bootstrap.servers=kafka-1.prod.lan:9094
security.protocol=SASL_SSL
sasl.mechanism=OAUTHBEARER
sasl.oauthbearer.token.endpoint.url=https://sso.acme.internal/realms/kafka/protocol/openid-connect/token
sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler
sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required \\
    clientId="ledger-api" \\
    clientSecret="${file:/etc/kafka/secrets/oauth.properties:clientSecret}" \\
    scope="kafka";
config.providers=file
config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
"""
    return "src/main/resources/kafka_client_jaas.conf", """KafkaClient {
    com.sun.security.auth.module.Krb5LoginModule required
    useKeyTab=true
    storeKey=true
    keyTab="/etc/security/keytabs/inventory-svc.keytab"
    principal="inventory-svc@CORP.LOCAL";
};
"""


@case("embedded-db-default-credentials", "none", 3)
def _(v):
    if v == 0:
        return "src/main/resources/application-dev.properties", """# In-memory H2 for local development
spring.datasource.url=jdbc:h2:mem:ordersdb;DB_CLOSE_DELAY=-1
spring.datasource.driver-class-name=org.h2.Driver
spring.datasource.username=sa
spring.datasource.password=
spring.h2.console.enabled=true
spring.h2.console.path=/h2-console
spring.jpa.hibernate.ddl-auto=create-drop
"""
    if v == 1:
        return "src/main/resources/application-local.yml", """# docker compose: rabbitmq:3-management with its default local-only guest account
spring:
  rabbitmq:
    host: localhost
    port: 5672
    username: guest
    password: guest
  datasource:
    url: jdbc:postgresql://localhost:5432/postgres
    username: postgres
    password: ${LOCAL_PG_PASSWORD:}
"""
    return "src/test/kotlin/com/globex/crm/support/Containers.kt", """package com.globex.crm.support

import org.springframework.test.context.DynamicPropertyRegistry
import org.springframework.test.context.DynamicPropertySource
import org.testcontainers.containers.PostgreSQLContainer
import org.testcontainers.junit.jupiter.Container

abstract class Containers {
    companion object {
        @Container
        @JvmStatic
        val postgres = PostgreSQLContainer("postgres:16-alpine")
            .withDatabaseName("crm")
            .withUsername("crm")
            .withPassword("crm")

        @DynamicPropertySource
        @JvmStatic
        fun props(r: DynamicPropertyRegistry) {
            r.add("spring.datasource.url", postgres::getJdbcUrl)
            r.add("spring.datasource.username", postgres::getUsername)
            r.add("spring.datasource.password", postgres::getPassword)
        }
    }
}
"""


@case("ids-hashes-next-to-credential-words", "none", 4)
def _(v):
    if v == 0:
        return "src/main/java/com/contoso/inventory/cache/CacheKeys.java", f"""package com.contoso.inventory.cache;

public final class CacheKeys {{

    public static final String TOKEN_CACHE = "oauth-token-cache";
    public static final String API_KEY_CACHE = "api-key-lookup";
    public static final String SCHEMA_FINGERPRINT = "{sha256hex()}";
    public static final String CACHE_KEY_SALT_VERSION = "v3";
    public static final String KEY_ID = "{uuid4()}";
    public static final String SECRET_NAME = "inventory/partner-api-key";
    public static final String PASSWORD_RESET_TEMPLATE_ID = "d-{hx(32)}";

    private CacheKeys() {{ }}
}}
"""
    if v == 1:
        return "src/main/resources/features.yml", f"""features:
  new-checkout:
    id: {uuid4()}
    enabled: true
    rollout-percentage: 25
  passwordless-login:
    id: {uuid4()}
    enabled: false
  token-refresh-v2:
    id: {uuid4()}
    enabled: true
build:
  id: {hx(40)}
  pipeline-run: {R.randint(100000, 999999)}
  cache-key: gradle-{sha256hex()}
"""
    if v == 2:
        return "src/Shared/Constants.cs", f"""namespace Shared;

public static class AuthConstants
{{
    public const string ApiKeyHeaderName = "X-Api-Key";
    public const string SecretHeaderName = "X-Webhook-Signature";
    public const string PasswordResetPurpose = "ResetPassword";
    public const string TokenProvider = "Default";
    public const string SigningKeyId = "{hx(32)}";
    public const string DataProtectionAppName = "Contoso.Portal";
    public static readonly Guid TenantId = Guid.Parse("{uuid4()}");
    public const string ManifestHash = "sha512-{b64bytes(64)}";
}}
"""
    return "internal/events/ids.go", f"""package events

const (
\t// Schema registry ids and content hashes for event types.
\tOrderCreatedSchemaID   = "{uuid4()}"
\tOrderCreatedSchemaHash = "{sha256hex()}"
\tTokenRevokedSchemaID   = "{uuid4()}"
\tTokenRevokedSchemaHash = "{sha256hex()}"
\tPasswordChangedTopic   = "identity.password-changed.v1"
\tSecretRotatedTopic     = "platform.secret-rotated.v1"
)
"""


@case("crypto-config-without-key-material", "none", 3)
def _(v):
    if v == 0:
        return "src/main/java/com/wingtip/auth/PasswordEncoderConfig.java", """package com.wingtip.auth;

import java.util.Map;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.crypto.argon2.Argon2PasswordEncoder;
import org.springframework.security.crypto.bcrypt.BCryptPasswordEncoder;
import org.springframework.security.crypto.password.DelegatingPasswordEncoder;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.security.crypto.password.Pbkdf2PasswordEncoder;

@Configuration
public class PasswordEncoderConfig {

    public static final String PASSWORD_ENCODER_ID = "argon2@SpringSecurity_v5_8";
    public static final int PASSWORD_MIN_LENGTH = 12;

    @Bean
    public PasswordEncoder passwordEncoder() {
        Map<String, PasswordEncoder> encoders = Map.of(
            "bcrypt", new BCryptPasswordEncoder(12),
            PASSWORD_ENCODER_ID, Argon2PasswordEncoder.defaultsForSpringSecurity_v5_8(),
            "pbkdf2@SpringSecurity_v5_8", Pbkdf2PasswordEncoder.defaultsForSpringSecurity_v5_8());
        return new DelegatingPasswordEncoder(PASSWORD_ENCODER_ID, encoders);
    }
}
"""
    if v == 1:
        return "src/Portal/Security/TokenProtector.cs", """using System.Security.Cryptography;
using Microsoft.AspNetCore.DataProtection;

namespace Portal.Security;

public sealed class TokenProtector
{
    private const string Purpose = "Portal.PasswordResetToken.v2";
    private const int SaltSize = 16;
    private const int KeySize = 32;
    private const int Iterations = 600_000;
    private readonly IDataProtector _protector;

    public TokenProtector(IDataProtectionProvider provider) => _protector = provider.CreateProtector(Purpose);

    public string Protect(string token) => _protector.Protect(token);

    public static (byte[] Hash, byte[] Salt) HashSecret(string secret)
    {
        var salt = RandomNumberGenerator.GetBytes(SaltSize);
        var hash = Rfc2898DeriveBytes.Pbkdf2(secret, salt, Iterations, HashAlgorithmName.SHA256, KeySize);
        return (hash, salt);
    }
}
"""
    return "src/token.rs", """use rand::RngCore;
use sha2::{Digest, Sha256};

pub const API_TOKEN_PREFIX: &str = "lum_";
pub const API_TOKEN_BYTES: usize = 32;

/// Generates a new API token; only its SHA-256 is stored.
pub fn generate() -> (String, String) {
    let mut raw = [0u8; API_TOKEN_BYTES];
    rand::thread_rng().fill_bytes(&mut raw);
    let token = format!("{}{}", API_TOKEN_PREFIX, hex::encode(raw));
    let digest = hex::encode(Sha256::digest(token.as_bytes()));
    (token, digest)
}

#[cfg(test)]
mod tests {
    #[test]
    fn token_has_prefix_and_length() {
        let (t, d) = super::generate();
        assert!(t.starts_with(super::API_TOKEN_PREFIX));
        assert_eq!(t.len(), 4 + 64);
        assert_eq!(d.len(), 64);
    }
}
"""


COUNT_OVERRIDE = {
    "spring-yaml-datasource-password": 3, "spring-value-annotation-default-secret": 4,
    "jdbc-url-inline-password": 3, "maven-settings-server-password": 3,
    "gradle-properties-publishing-credentials": 3, "android-signing-config-password": 3,
    "spring-oauth2-client-secret": 3, "kafka-jaas-sasl-password": 3,
    "nosql-cache-uri-password": 3, "dotnet-appsettings-connection-password": 3,
    "azure-connection-string-key": 3, "go-const-block-token": 3, "play-hocon-secret": 3,
}


def ext_of(path):
    base = path.rsplit("/", 1)[-1]
    if "." in base.strip("."):
        return base.rsplit(".", 1)[-1].lower()
    return base.lstrip(".").lower()


def main():
    rows = []
    for cls, label, count, f in GENS:
        n = COUNT_OVERRIDE.get(cls, count)
        for v in range(n):
            path, text = f(v)
            rows.append({"source": SOURCE, "class": cls, "label": label, "ext": ext_of(path),
                         "path": path, "origin": ORIGIN, "text": text})
    with open(OUT, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    sec = sum(1 for r in rows if r["label"] == "secret")
    print("wrote %d cases (%d secret, %d none, %d classes) to %s"
          % (len(rows), sec, len(rows) - sec, len({r["class"] for r in rows}), OUT))


if __name__ == "__main__":
    main()
