#!/usr/bin/env python3
"""Blind held-out corpus, round 7: languages and config formats off the beaten path.

Writes generator10.jsonl next to this script. Stdlib only, deterministic.
Every "secret" case holds exactly one live-shaped credential (recorded and
checked below); every "none" case holds only look-alikes: public keys,
hashes, encrypted blobs, placeholders, variable references, ids.
"""
import base64
import json
import os
import random
import struct

SEED = 20261208
ORIGIN = "make_blind_round7.py seed 20261208"
R = random.Random(SEED)

LOWER = "abcdefghijklmnopqrstuvwxyz"
UPPER = LOWER.upper()
DIGITS = "0123456789"
ALNUM = LOWER + UPPER + DIGITS
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
CRYPT64 = "./" + DIGITS + UPPER + LOWER

USED = set()


def uniq(fn):
    def w(*a, **k):
        for _ in range(100):
            v = fn(*a, **k)
            if v not in USED:
                USED.add(v)
                return v
        raise RuntimeError("could not make a unique value")
    return w


def _rs(n, alpha=ALNUM):
    return "".join(R.choice(alpha) for _ in range(n))


def _rb(n):
    return bytes(R.getrandbits(8) for _ in range(n))


rs = uniq(_rs)


@uniq
def hexs(n):
    return _rs(n, HEX)


@uniq
def digits(n):
    return R.choice("123456789") + _rs(n - 1, DIGITS)


@uniq
def b64(n, pad=True):
    s = base64.b64encode(_rb(n)).decode()
    return s if pad else s.rstrip("=")


@uniq
def b64url(n):
    return base64.urlsafe_b64encode(_rb(n)).decode().rstrip("=")


def b64raw(prefix, n):
    return base64.b64encode(prefix + _rb(n)).decode()


@uniq
def guid(upper=False):
    h = _rs(32, HEX)
    h = h[:12] + "4" + h[13:16] + R.choice("89ab") + h[17:]
    g = "-".join([h[:8], h[8:12], h[12:16], h[16:20], h[20:]])
    return g.upper() if upper else g


def wrap(s, n=64):
    return "\n".join(s[i:i + n] for i in range(0, len(s), n))


WORDS = ("amber anvil aspen basalt beacon birch bramble cedar cinder cobalt comet "
         "coral cypress delta ember falcon fjord garnet glacier harbor hazel heron "
         "indigo juniper kestrel lagoon larch lichen lumen maple marlin meadow "
         "nimbus obsidian onyx orchid osprey pebble pine plover quartz quill raven "
         "reef saffron sable shale sparrow spruce summit tamarack thistle tundra "
         "umber vale walnut willow yarrow zephyr").split()


@uniq
def pw(safe=False):
    """A real-shaped password. safe=True keeps it to URL/shell-safe characters."""
    style = R.randrange(4)
    sym = "-_.~" if safe else "!#%*-_+=.^@"
    if style == 0:
        n = R.randrange(14, 22)
        s = [R.choice(ALNUM) for _ in range(n - 3)] + [R.choice(UPPER), R.choice(DIGITS), R.choice(sym)]
        R.shuffle(s)
        return "".join(s)
    if style == 1:
        w = [R.choice(WORDS) for _ in range(3)]
        return w[0].capitalize() + R.choice(sym) + w[1] + str(R.randrange(10, 99)) + R.choice(sym) + w[2].capitalize() + _rs(3)
    if style == 2:
        return _rs(R.randrange(20, 33), ALNUM)
    return _rs(4, UPPER) + R.choice(sym) + _rs(6, LOWER + DIGITS) + R.choice(sym) + _rs(5, ALNUM) + str(R.randrange(100, 999))


@uniq
def weak_word():
    return R.choice(WORDS) + R.choice(WORDS)


def pick(*xs):
    return R.choice(xs)


# ----------------------------------------------------------------- vendor tokens
def ghp(): return "ghp_" + rs(36)
def gh_fine(): return "github_pat_11" + rs(20, UPPER + DIGITS) + "_" + rs(59)
def glpat(): return "glpat-" + rs(20, URLSAFE)
def slack_bot(): return "xoxb-%s-%s-%s" % (digits(11), digits(13), rs(24))
def slack_hook(): return "https://hooks.slack.com/services/T%s/B%s/%s" % (rs(8, UPPER + DIGITS), rs(10, UPPER + DIGITS), rs(24))
def discord_hook(): return "https://discord.com/api/webhooks/%s/%s" % (digits(19), rs(68, URLSAFE))
def stripe_sk(): return pick("sk_live_", "rk_live_") + rs(pick(24, 34, 99))
def stripe_pk(): return "pk_live_" + rs(pick(24, 34, 99))
def sendgrid(): return "SG." + rs(22, URLSAFE) + "." + rs(43, URLSAFE)
def google_key(): return "AIza" + rs(35, URLSAFE)
def telegram(): return "%s:AA%s" % (digits(10), rs(33, URLSAFE))
def mailgun(): return "key-" + hexs(32)
def npm_tok(): return "npm_" + rs(36)
def pypi_tok(): return "pypi-AgEIcHlwaS5vcmc" + rs(R.randrange(60, 120), URLSAFE)
def hf_tok(): return "hf_" + rs(34, LOWER + UPPER)
def openai_key(): return "sk-" + rs(20) + "T3BlbkFJ" + rs(20)
def anthropic_key(): return "sk-ant-api03-" + rs(93, URLSAFE) + "AA"
def do_tok(): return "dop_v1_" + hexs(64)
def vault_tok(): return "hvs." + rs(24)
def doppler_tok(): return "dp.st.prd." + rs(40)
def linear_tok(): return "lin_api_" + rs(40)
def shopify_tok(): return "shpat_" + hexs(32)
def glrt(): return "glrt-" + rs(20, URLSAFE)
def grafana_sa(): return "glsa_" + rs(32) + "_" + hexs(8)
def postman(): return "PMAK-" + hexs(24) + "-" + hexs(34)
def newrelic(): return "NRAK-" + rs(27, UPPER + DIGITS)
def tailscale(): return "tskey-auth-k" + rs(10, ALNUM) + "CNTRL-" + rs(33, ALNUM)
def crates_tok(): return "cio" + rs(32)
def sentry_user(): return "sntryu_" + hexs(64)
def dd_key(): return hexs(32)
def twilio_sid(): return "AC" + hexs(32)
def aws_secret(): return rs(40, ALNUM + "+/")
def age_secret(): return "AGE-SECRET-KEY-1" + rs(58, BECH32.upper())
def age_public(): return "age1" + rs(58, BECH32)
def wg_key(): return b64(32)
def mapbox_pk(user):
    payload = base64.urlsafe_b64encode(json.dumps({"u": user, "a": rs(25, LOWER + DIGITS)}, separators=(",", ":")).encode()).decode().rstrip("=")
    return "pk." + payload + "." + rs(22, URLSAFE)
def google_client_id(): return "%s-%s.apps.googleusercontent.com" % (digits(12), rs(32, LOWER + DIGITS))


# ----------------------------------------------------------------- key material
def der_pem(label, prefix, n, width=64):
    body = base64.b64encode(prefix + _rb(n)).decode()
    USED.add(body)
    return "-----BEGIN %s-----\n%s\n-----END %s-----" % (label, wrap(body, width), label)


RSA_PRIV = bytes.fromhex("308204a40201000282010100")
PKCS8_RSA = bytes.fromhex("308204be020100300d06092a864886f70d0101010500048204a8")
EC_PRIV = bytes.fromhex("30770201010420")
PKCS8_ED = bytes.fromhex("302e020100300506032b657004220420")
CERT = bytes.fromhex("3082034d30820235a003020102021416")
CSR = bytes.fromhex("308202a130820189020100305c310b3009060355040613")
PUBKEY = bytes.fromhex("30820122300d06092a864886f70d01010105000382010f003082010a0282010100")
EC_PUB = bytes.fromhex("3059301306072a8648ce3d020106082a8648ce3d030107034200")


def rsa_private(): return der_pem("RSA PRIVATE KEY", RSA_PRIV, 1180)
def pkcs8_private(): return der_pem("PRIVATE KEY", PKCS8_RSA, 1190)
def ec_private():
    return der_pem("EC PRIVATE KEY", EC_PRIV + _rb(32) + bytes.fromhex("a00a06082a8648ce3d030107a14403420004"), 64)
def ed_private(): return der_pem("PRIVATE KEY", PKCS8_ED, 32)
def certificate(): return der_pem("CERTIFICATE", CERT, R.randrange(780, 860))
def csr(): return der_pem("CERTIFICATE REQUEST", CSR, R.randrange(600, 660))
def public_key(): return der_pem("PUBLIC KEY", PUBKEY, 261)
def ec_public_key(): return der_pem("PUBLIC KEY", EC_PUB, 65)


def openssh_private():
    body = base64.b64encode(b"openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00\x00\x04none\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x003\x00\x00\x00\x0bssh-ed25519\x00\x00\x00 " + _rb(260)).decode()
    USED.add(body)
    return "-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n-----END OPENSSH PRIVATE KEY-----" % wrap(body, 70)


@uniq
def ssh_ed25519_pub():
    return "ssh-ed25519 " + base64.b64encode(b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + _rb(32)).decode()


@uniq
def ssh_rsa_pub():
    return "ssh-rsa " + base64.b64encode(b"\x00\x00\x00\x07ssh-rsa\x00\x00\x00\x03\x01\x00\x01\x00\x00\x01\x81\x00" + _rb(384)).decode()


@uniq
def ssh_ecdsa_pub():
    return "ecdsa-sha2-nistp256 " + base64.b64encode(b"\x00\x00\x00\x13ecdsa-sha2-nistp256\x00\x00\x00\x08nistp256\x00\x00\x00\x41\x04" + _rb(64)).decode()


def ssh_fp(): return "SHA256:" + b64(32, pad=False)


def pgp_block(private):
    kind = "PRIVATE" if private else "PUBLIC"
    head = bytes.fromhex("9507460467" if private else "99020d0467")
    body = base64.b64encode(head + _rb(R.randrange(1100, 1700) if private else R.randrange(700, 1100))).decode()
    USED.add(body)
    crc = base64.b64encode(_rb(3)).decode()
    return "-----BEGIN PGP %s KEY BLOCK-----\n\n%s\n=%s\n-----END PGP %s KEY BLOCK-----" % (kind, wrap(body, 64), crc, kind)


def pgp_fpr(): return hexs(40).upper()


# ----------------------------------------------------------------- hashes & blobs
def bcrypt(cost=None): return "$2%s$%02d$" % (pick("a", "b", "y"), cost or pick(10, 11, 12)) + rs(53, CRYPT64)
def apr1(): return "$apr1$" + rs(8, CRYPT64) + "$" + rs(22, CRYPT64)
def sha512crypt(): return "$6$" + rs(16, CRYPT64) + "$" + rs(86, CRYPT64)
def yescrypt(): return "$y$j9T$" + rs(22, CRYPT64) + "$" + rs(43, CRYPT64)
def ssha(): return "{SSHA}" + b64(24)
def mysql_hash(): return "*" + hexs(40).upper()
def scram(): return "SCRAM-SHA-256$4096:%s$%s:%s" % (b64(16), b64(32), b64(32))
def mosq_hash(): return "$7$101$%s$%s" % (b64(12), b64(64))
def sha256hex(): return hexs(64)
def sha1hex(): return hexs(40)
def sri(alg="sha512"): return "%s-%s" % (alg, b64(64 if alg == "sha512" else 48 if alg == "sha384" else 32))
def nix_sri(): return "sha256-" + b64(32)
def sops_enc(n=None, typ="str"):
    return "ENC[AES256_GCM,data:%s,iv:%s,tag:%s,type:%s]" % (b64(n or R.randrange(8, 40)), b64(32), b64(16), typ)
def ansible_vault():
    body = hexs(R.randrange(5, 9) * 80)
    return "$ANSIBLE_VAULT;1.1;AES256\n" + wrap(body, 80)
def age_armor():
    body = base64.b64encode(b"age-encryption.org/v1\n-> X25519 " + _rb(R.randrange(180, 260))).decode()
    USED.add(body)
    return "-----BEGIN AGE ENCRYPTED FILE-----\n%s\n-----END AGE ENCRYPTED FILE-----" % wrap(body, 64)


# ----------------------------------------------------------------- names
HOSTS = ["db-primary.internal", "pg01.prod.lan", "mysql.svc.cluster.local", "10.20.4.17",
         "rds-orders.c9x2k1.eu-west-1.rds.amazonaws.com", "postgres.staging.corp", "db.home.arpa",
         "maria-02.dc2.example.net", "127.0.0.1", "pgbouncer.infra"]
ORGS = ["acme", "northwind", "tidewater", "brightlane", "quarry", "hollowpine", "kitewerk",
        "ferrous", "lumosity-labs", "saltmarsh", "openfield", "redkite", "calyx", "mistral-ops"]
USERS = ["deploy", "svc_app", "orders", "wpuser", "grafana", "ci-bot", "reporting", "etl", "admin_ro", "backend"]
APPS = ["orders", "ledger", "atlas", "pipit", "harbor", "beacon", "quill", "sprout", "tern", "fathom", "lattice"]


# One host/org/user/app per case, so that a file names the same project throughout;
# the context is cleared each time a case is added.
CTX = {}


def host(): return CTX.setdefault("host", R.choice(HOSTS))
def org(): return CTX.setdefault("org", R.choice(ORGS))
def user(): return CTX.setdefault("user", R.choice(USERS))
def app(): return CTX.setdefault("app", R.choice(APPS))


# ----------------------------------------------------------------- case store
CASES = []


def T(tpl, **kw):
    for k, v in kw.items():
        tpl = tpl.replace("«%s»" % k, str(v))
    assert "«" not in tpl, tpl[:200]
    return tpl.lstrip("\n")


def path_ext(path):
    """The extension as the path spells it: "a/b.yaml" -> "yaml", ".env" -> "env", "Caddyfile" -> ""."""
    base = path.rsplit("/", 1)[-1]
    if "." in base.lstrip("."):
        return base.rsplit(".", 1)[1]
    return base[1:] if base.startswith(".") else ""


def add(cls, label, ext, path, text, secret=None):
    ext = path_ext(path)
    if label == "secret":
        assert secret and secret in text, (cls, secret)
    else:
        assert secret is None
    CASES.append({"source": "generator-10", "class": cls, "label": label, "ext": ext,
                  "path": path, "origin": ORIGIN, "text": text, "_secret": secret})
    CTX.clear()


# ================================================================= Kotlin / Gradle / Android
def gradle_properties_signing_secret():
    p = pw()
    name = app()
    text = T("""
# Project-wide Gradle settings.
org.gradle.jvmargs=-Xmx«mem»m -Dfile.encoding=UTF-8
org.gradle.parallel=true
org.gradle.caching=true
android.useAndroidX=true
kotlin.code.style=official
android.nonTransitiveRClass=true

# Release signing («name»)
RELEASE_STORE_FILE=../keystores/«name»-release.jks
RELEASE_KEY_ALIAS=«name»-upload
RELEASE_STORE_PASSWORD=«p»
RELEASE_KEY_PASSWORD=«p»

VERSION_NAME=«v»
VERSION_CODE=«vc»
""", mem=pick(2048, 4096, 6144), name=name, p=p, v="%d.%d.%d" % (R.randrange(1, 5), R.randrange(0, 20), R.randrange(0, 9)), vc=R.randrange(100, 9000))
    add("gradle-properties-signing", "secret", "properties", pick("gradle.properties", "android/gradle.properties"), text, p)


def gradle_properties_maven_secret():
    tok = pick(ghp, glpat)()
    key = "gpr.key" if tok.startswith("ghp_") else "gitlabPrivateToken"
    text = T("""
org.gradle.jvmargs=-Xmx3g -XX:MaxMetaspaceSize=512m
org.gradle.configuration-cache=true
kotlin.incremental=true

GROUP=io.«org».«app»
POM_ARTIFACT_ID=«app»-core
POM_NAME=«App» Core
POM_LICENCE_NAME=The Apache Software License, Version 2.0

gpr.user=«u»
«key»=«tok»
""", org=org().replace("-", ""), app=app(), App=app().capitalize(), u=user(), key=key, tok=tok)
    add("gradle-properties-registry-token", "secret", "properties", "gradle.properties", text, tok)


def gradle_properties_none():
    fp = pgp_fpr()
    text = T("""
# Gradle daemon and Kotlin settings
org.gradle.jvmargs=-Xmx4g -Dfile.encoding=UTF-8
org.gradle.parallel=true
kotlin.daemon.jvmargs=-Xmx2g
android.useAndroidX=true

# Publishing: credentials come from ~/.gradle/gradle.properties or CI env
signing.keyId=«kid»
signing.password=
signing.secretKeyRingFile=
mavenCentralUsername=
mavenCentralPassword=

# Key fingerprint published on keys.openpgp.org
SIGNING_KEY_FINGERPRINT=«fp»
# Checksum of the wrapper distribution
distributionSha256Sum=«sha»
""", kid=fp[-8:], fp=fp, sha=sha256hex())
    add("gradle-properties-empty-creds", "none", "properties", "gradle.properties", text)


def gradle_wrapper_none():
    text = T("""
distributionBase=GRADLE_USER_HOME
distributionPath=wrapper/dists
distributionSha256Sum=«sha»
distributionUrl=https\\://services.gradle.org/distributions/gradle-8.«m»-bin.zip
networkTimeout=10000
validateDistributionUrl=true
zipStoreBase=GRADLE_USER_HOME
zipStorePath=wrapper/dists
""", sha=sha256hex(), m=R.randrange(4, 12))
    add("gradle-wrapper-checksum", "none", "properties", "gradle/wrapper/gradle-wrapper.properties", text)


def local_properties_secret():
    k = google_key()
    text = T("""
## This file must *NOT* be checked into Version Control Systems,
# as it contains information specific to your local configuration.
#
# Location of the SDK. This is only used by Gradle.
#«date»
sdk.dir=«sdk»
flutter.sdk=«fl»
MAPS_API_KEY=«k»
""", date=pick("Tue Mar 04 10:12:55 CET 2025", "Mon Nov 11 09:01:43 PST 2024"),
        sdk=pick("/Users/%s/Library/Android/sdk" % pick("mkowalski", "jdoe", "ana"), "C\\:\\\\Users\\\\dev\\\\AppData\\\\Local\\\\Android\\\\Sdk"),
        fl=pick("/opt/flutter", "/Users/ana/dev/flutter"), k=k)
    add("android-local-properties-maps-key", "secret", "properties", pick("local.properties", "android/local.properties"), text, k)


def local_properties_none():
    text = T("""
## This file is automatically generated by Android Studio.
# Do not modify this file -- YOUR CHANGES WILL BE ERASED!
sdk.dir=/home/«u»/Android/Sdk
ndk.dir=/home/«u»/Android/Sdk/ndk/26.1.10909125
MAPS_API_KEY=YOUR_MAPS_API_KEY_HERE
SENTRY_AUTH_TOKEN=<set-in-ci>
""", u=pick("runner", "lena", "builder"))
    add("android-local-properties-placeholder", "none", "properties", "local.properties", text)


def build_gradle_kts_signing_secret():
    p = pw()
    text = T("""
plugins {
    id("com.android.application")
    id("org.jetbrains.kotlin.android")
}

android {
    namespace = "com.«org».«app»"
    compileSdk = 34

    defaultConfig {
        applicationId = "com.«org».«app»"
        minSdk = 24
        targetSdk = 34
        versionCode = «vc»
        versionName = "«vn»"
    }

    signingConfigs {
        create("release") {
            storeFile = file("release.keystore")
            storePassword = "«p»"
            keyAlias = "release"
            keyPassword = "«p»"
        }
    }

    buildTypes {
        release {
            isMinifyEnabled = true
            signingConfig = signingConfigs.getByName("release")
            proguardFiles(getDefaultProguardFile("proguard-android-optimize.txt"), "proguard-rules.pro")
        }
    }
}

dependencies {
    implementation("androidx.core:core-ktx:1.12.0")
    implementation("com.squareup.okhttp3:okhttp:4.12.0")
}
""", org=org().replace("-", ""), app=app(), vc=R.randrange(10, 500), vn="%d.%d" % (R.randrange(1, 4), R.randrange(0, 30)), p=p)
    add("gradle-kts-signing-literal", "secret", "kts", "app/build.gradle.kts", text, p)


def build_gradle_kts_env_none():
    text = T("""
import java.util.Properties

plugins {
    id("com.android.application")
    kotlin("android")
}

val keystoreProps = Properties().apply {
    val f = rootProject.file("keystore.properties")
    if (f.exists()) load(f.inputStream())
}

android {
    namespace = "org.«org».«app»"
    compileSdk = 34
    defaultConfig {
        buildConfigField("String", "API_BASE", "\\"https://api.«org».io/v2\\"")
        buildConfigField("String", "API_KEY", "\\"${System.getenv("«APP»_API_KEY") ?: ""}\\"")
    }
    signingConfigs {
        create("release") {
            storeFile = file(keystoreProps.getProperty("storeFile") ?: "debug.keystore")
            storePassword = keystoreProps.getProperty("storePassword") ?: System.getenv("STORE_PASSWORD")
            keyAlias = keystoreProps.getProperty("keyAlias")
            keyPassword = keystoreProps.getProperty("keyPassword") ?: System.getenv("KEY_PASSWORD")
        }
    }
}

publishing {
    repositories {
        maven {
            url = uri("https://maven.pkg.github.com/«org»/«app»")
            credentials {
                username = project.findProperty("gpr.user") as String? ?: System.getenv("GITHUB_ACTOR")
                password = project.findProperty("gpr.key") as String? ?: System.getenv("GITHUB_TOKEN")
            }
        }
    }
}
""", org=org().replace("-", ""), app=app(), APP=app().upper())
    add("gradle-kts-env-refs", "none", "kts", pick("app/build.gradle.kts", "build.gradle.kts"), text)


def gradle_verification_metadata_none():
    rows = []
    for g, a, v in [("com.squareup.okhttp3", "okhttp", "4.12.0"), ("org.jetbrains.kotlin", "kotlin-stdlib", "1.9.22"),
                    ("com.google.code.gson", "gson", "2.10.1"), ("io.ktor", "ktor-client-core-jvm", "2.3.7")]:
        rows.append(T("""      <component group="«g»" name="«a»" version="«v»">
         <artifact name="«a»-«v».jar">
            <sha256 value="«h»" origin="Generated by Gradle"/>
         </artifact>
         <artifact name="«a»-«v».pom">
            <sha256 value="«h2»" origin="Generated by Gradle"/>
         </artifact>
      </component>""", g=g, a=a, v=v, h=sha256hex(), h2=sha256hex()))
    text = T("""
<?xml version="1.0" encoding="UTF-8"?>
<verification-metadata xmlns="https://schema.gradle.org/dependency-verification" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="https://schema.gradle.org/dependency-verification https://schema.gradle.org/dependency-verification/dependency-verification-1.3.xsd">
   <configuration>
      <verify-metadata>true</verify-metadata>
      <verify-signatures>true</verify-signatures>
      <trusted-keys>
         <trusted-key id="«k1»" group="com.squareup.okhttp3"/>
         <trusted-key id="«k2»" group="org.jetbrains.kotlin"/>
      </trusted-keys>
   </configuration>
   <components>
«rows»
   </components>
</verification-metadata>
""", k1=pgp_fpr(), k2=pgp_fpr(), rows="\n".join(rows))
    add("gradle-verification-metadata", "none", "xml", "gradle/verification-metadata.xml", text)


def kotlin_source_secret():
    tok = pick(sendgrid, stripe_sk, slack_bot)()
    text = T("""
package com.«org».notify

import okhttp3.MediaType.Companion.toMediaType
import okhttp3.OkHttpClient
import okhttp3.Request
import okhttp3.RequestBody.Companion.toRequestBody

object NotifyClient {
    private const val BASE_URL = "«url»"
    // TODO move to BuildConfig before release
    private const val API_TOKEN = "«tok»"

    private val http = OkHttpClient()

    fun send(payload: String): Boolean {
        val req = Request.Builder()
            .url(BASE_URL)
            .header("Authorization", "Bearer $API_TOKEN")
            .post(payload.toRequestBody("application/json".toMediaType()))
            .build()
        http.newCall(req).execute().use { return it.isSuccessful }
    }
}
""", org=org().replace("-", ""), tok=tok,
        url={"SG.": "https://api.sendgrid.com/v3/mail/send", "sk_": "https://api.stripe.com/v1/charges",
             "rk_": "https://api.stripe.com/v1/charges", "xox": "https://slack.com/api/chat.postMessage"}[tok[:3]])
    add("kotlin-const-token", "secret", "kt", "app/src/main/java/com/%s/notify/NotifyClient.kt" % org().replace("-", ""), text, tok)


# ================================================================= Swift / Xcode
def info_plist_none():
    text = T("""
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>CFBundleDevelopmentRegion</key>
	<string>$(DEVELOPMENT_LANGUAGE)</string>
	<key>CFBundleExecutable</key>
	<string>$(EXECUTABLE_NAME)</string>
	<key>CFBundleIdentifier</key>
	<string>$(PRODUCT_BUNDLE_IDENTIFIER)</string>
	<key>CFBundleShortVersionString</key>
	<string>$(MARKETING_VERSION)</string>
	<key>CFBundleVersion</key>
	<string>$(CURRENT_PROJECT_VERSION)</string>
	<key>CFBundleURLTypes</key>
	<array>
		<dict>
			<key>CFBundleURLSchemes</key>
			<array>
				<string>com.googleusercontent.apps.«gcid»</string>
			</array>
		</dict>
	</array>
	<key>GIDClientID</key>
	<string>«gcid_full»</string>
	<key>MBXAccessToken</key>
	<string>«mapbox»</string>
	<key>API_KEY</key>
	<string>$(«APP»_API_KEY)</string>
	<key>SentryDSN</key>
	<string>$(SENTRY_DSN)</string>
	<key>NSCameraUsageDescription</key>
	<string>Scan receipts with the camera.</string>
	<key>UIApplicationSceneManifest</key>
	<dict>
		<key>UIApplicationSupportsMultipleScenes</key>
		<false/>
	</dict>
</dict>
</plist>
""", gcid=(lambda c: c.split(".apps")[0])(google_client_id()), gcid_full=google_client_id(),
        mapbox=mapbox_pk(org()), APP=app().upper())
    add("ios-info-plist-build-vars", "none", "plist", "%s/Info.plist" % app().capitalize(), text)


def info_plist_secret():
    tok = pick(openai_key, hf_tok, linear_tok)()
    text = T("""
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>CFBundleName</key>
	<string>«App»</string>
	<key>CFBundleIdentifier</key>
	<string>dev.«org».«app»</string>
	<key>CFBundleVersion</key>
	<string>«build»</string>
	<key>LSRequiresIPhoneOS</key>
	<true/>
	<key>«K»</key>
	<string>«tok»</string>
	<key>UIRequiredDeviceCapabilities</key>
	<array>
		<string>armv7</string>
	</array>
</dict>
</plist>
""", App=app().capitalize(), org=org().replace("-", ""), app=app(), build=R.randrange(1, 400),
        K=pick("OpenAIAPIKey", "ServiceToken", "AssistantAPIKey"), tok=tok)
    add("ios-info-plist-token", "secret", "plist", "%s/Info.plist" % app().capitalize(), text, tok)


def google_service_info_secret():
    k = google_key()
    proj = "%s-%s" % (app(), digits(5))
    sender = digits(12)
    text = T("""
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>CLIENT_ID</key>
	<string>«sender»-«cid».apps.googleusercontent.com</string>
	<key>REVERSED_CLIENT_ID</key>
	<string>com.googleusercontent.apps.«sender»-«cid»</string>
	<key>API_KEY</key>
	<string>«k»</string>
	<key>GCM_SENDER_ID</key>
	<string>«sender»</string>
	<key>PLIST_VERSION</key>
	<string>1</string>
	<key>BUNDLE_ID</key>
	<string>com.«org».«app»</string>
	<key>PROJECT_ID</key>
	<string>«proj»</string>
	<key>STORAGE_BUCKET</key>
	<string>«proj».appspot.com</string>
	<key>IS_GCM_ENABLED</key>
	<true></true>
	<key>IS_SIGNIN_ENABLED</key>
	<true></true>
	<key>GOOGLE_APP_ID</key>
	<string>1:«sender»:ios:«appid»</string>
</dict>
</plist>
""", sender=sender, cid=rs(32, LOWER + DIGITS), k=k, org=org().replace("-", ""), app=app(), proj=proj, appid=hexs(22))
    add("ios-google-service-info", "secret", "plist", "ios/Runner/GoogleService-Info.plist", text, k)


def entitlements_none():
    team = rs(10, UPPER + DIGITS)
    text = T("""
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>aps-environment</key>
	<string>production</string>
	<key>com.apple.developer.associated-domains</key>
	<array>
		<string>applinks:«org».app</string>
		<string>webcredentials:«org».app</string>
	</array>
	<key>com.apple.security.application-groups</key>
	<array>
		<string>group.com.«org».«app»</string>
	</array>
	<key>keychain-access-groups</key>
	<array>
		<string>$(AppIdentifierPrefix)com.«org».shared</string>
		<string>«team».com.«org».«app».keychain</string>
	</array>
	<key>com.apple.developer.team-identifier</key>
	<string>«team»</string>
	<key>com.apple.developer.icloud-container-identifiers</key>
	<array>
		<string>iCloud.com.«org».«app»</string>
	</array>
</dict>
</plist>
""", org=org().replace("-", ""), app=app(), team=team)
    add("ios-entitlements", "none", "entitlements", "%s/%s.entitlements" % (app().capitalize(), app().capitalize()), text)


def xcconfig_none():
    text = T("""
// Secrets.xcconfig — real values are injected by CI from the keychain.
// Copy Secrets.example.xcconfig to Secrets.xcconfig for local builds.
#include? "Secrets.local.xcconfig"

API_HOST = api.«org».dev
API_KEY = $(inherited)
STRIPE_PUBLISHABLE_KEY = «pk»
REVENUECAT_KEY = YOUR_REVENUECAT_KEY
DEVELOPMENT_TEAM = «team»
PRODUCT_BUNDLE_IDENTIFIER = com.«org».«app»
CODE_SIGN_IDENTITY = Apple Distribution
PROVISIONING_PROFILE_SPECIFIER = match AppStore com.«org».«app»
""", org=org().replace("-", ""), app=app(), pk=stripe_pk(), team=rs(10, UPPER + DIGITS))
    add("xcconfig-publishable-and-refs", "none", "xcconfig", "Config/Secrets.xcconfig", text)


def swift_source_secret():
    tok = pick(stripe_sk, sendgrid, anthropic_key, telegram)()
    text = T("""
import Foundation

enum APIConfig {
    static let baseURL = URL(string: "https://«host»")!
    static let timeout: TimeInterval = 30
    static let secret = "«tok»"
}

final class «Cls» {
    private let session: URLSession

    init(session: URLSession = .shared) {
        self.session = session
    }

    func request(_ path: String) -> URLRequest {
        var req = URLRequest(url: APIConfig.baseURL.appendingPathComponent(path))
        req.setValue("Bearer \\(APIConfig.secret)", forHTTPHeaderField: "Authorization")
        req.timeoutInterval = APIConfig.timeout
        return req
    }
}
""", host=pick("api.stripe.com", "api.sendgrid.com", "api.anthropic.com", "api.telegram.org"), tok=tok,
        Cls=pick("PaymentsClient", "MailClient", "AssistantClient", "BotClient"))
    add("swift-static-secret", "secret", "swift", "Sources/Networking/APIConfig.swift", text, tok)


def swift_keychain_none():
    text = T("""
import Foundation
import Security

/// Reads tokens from the keychain; never hard-code them here.
struct TokenStore {
    let service = "com.«org».«app».auth"

    func token(for account: String) -> String? {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecReturnData as String: true,
        ]
        var item: CFTypeRef?
        guard SecItemCopyMatching(query as CFDictionary, &item) == errSecSuccess,
              let data = item as? Data else { return nil }
        return String(data: data, encoding: .utf8)
    }
}

#if DEBUG
// Test fixture: matches the mock server in Tests/Fixtures/auth.json
let previewToken = "preview-token-not-real"
let placeholderKey = "sk_test_XXXXXXXXXXXXXXXXXXXXXXXX"
#endif

let appGroup = "group.com.«org».«app»"
let installID = UUID(uuidString: "«g»")!
""", org=org().replace("-", ""), app=app(), g=guid(True))
    add("swift-keychain-placeholders", "none", "swift", "Sources/Auth/TokenStore.swift", text)


# ================================================================= Dart / Flutter
def pubspec_lock_none():
    rows = []
    for name, ver in [("http", "1.2.1"), ("provider", "6.1.2"), ("intl", "0.19.0"), ("path_provider", "2.1.3"), ("shared_preferences", "2.2.3")]:
        rows.append(T("""  «n»:
    dependency: "direct main"
    description:
      name: «n»
      sha256: "«h»"
      url: "https://pub.dev"
    source: hosted
    version: "«v»\"""", n=name, v=ver, h=sha256hex()))
    text = "# Generated by pub\n# See https://dart.dev/tools/pub/glossary#lockfile\npackages:\n" + "\n".join(rows) + "\nsdks:\n  dart: \">=3.3.0 <4.0.0\"\n  flutter: \">=3.19.0\"\n"
    add("pubspec-lock-hashes", "none", "lock", "pubspec.lock", text)


def pubspec_yaml_none():
    text = T("""
name: «app»_mobile
description: "«App» companion app."
publish_to: 'none'
version: 1.«m».«p»+«b»

environment:
  sdk: '>=3.3.0 <4.0.0'

dependencies:
  flutter:
    sdk: flutter
  http: ^1.2.1
  flutter_dotenv: ^5.1.0
  «app»_api:
    git:
      url: https://github.com/«org»/«app»-api-dart.git
      ref: «sha»

flutter:
  uses-material-design: true
  assets:
    - .env.example
    - assets/images/
""", app=app(), App=app().capitalize(), m=R.randrange(0, 9), p=R.randrange(0, 9), b=R.randrange(1, 200), org=org(), sha=sha1hex())
    add("pubspec-yaml-git-ref", "none", "yaml", "pubspec.yaml", text)


def dart_env_secret():
    tok = pick(google_key, stripe_sk, openai_key, sentry_user)()
    text = T("""
// lib/env.dart
class Env {
  static const String apiBase = String.fromEnvironment(
    'API_BASE',
    defaultValue: 'https://api.«org».app',
  );

  static const String «name» = '«tok»';

  static const bool analytics = bool.fromEnvironment('ANALYTICS', defaultValue: false);
  static const int retries = 3;
}
""", org=org(), name=pick("placesKey", "paymentsSecret", "assistantKey", "sentryToken"), tok=tok)
    add("dart-env-const", "secret", "dart", "lib/env.dart", text, tok)


def dart_env_none():
    text = T("""
import 'package:envied/envied.dart';

part 'env.g.dart';

@Envied(path: '.env', obfuscate: true)
abstract class Env {
  @EnviedField(varName: 'OPENAI_API_KEY')
  static final String openAiKey = _Env.openAiKey;

  @EnviedField(varName: 'SUPABASE_ANON_KEY')
  static final String supabaseAnon = _Env.supabaseAnon;
}

const apiKeyFromDefine = String.fromEnvironment('API_KEY', defaultValue: 'REPLACE_ME');
const buildId = '«bid»';
const commit = '«sha»';
""", bid=rs(24, LOWER + DIGITS), sha=sha1hex())
    add("dart-envied-refs", "none", "dart", "lib/env/env.dart", text)


def flutter_dotenv_example_none():
    text = T("""
# Copy to .env and fill in. Never commit .env.
API_BASE=https://api.«org».app
OPENAI_API_KEY=sk-...
STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx
MAPBOX_TOKEN=<your mapbox token>
SENTRY_DSN=
FIREBASE_WEB_API_KEY=${FIREBASE_WEB_API_KEY}
""", org=org())
    add("dotenv-example-placeholders", "none", "example", pick(".env.example", "assets/.env.example"), text)


# ================================================================= Lua
def nvim_lua_none():
    text = T("""
-- lua/plugins/ai.lua
return {
  {
    "«plugin»",
    event = "VeryLazy",
    opts = {
      provider = "openai",
      openai = {
        endpoint = "https://api.openai.com/v1",
        model = "gpt-4o-mini",
        api_key_name = "OPENAI_API_KEY",
        -- or: api_key_name = "cmd:pass show api/openai"
        timeout = 30000,
      },
    },
    config = function(_, opts)
      local key = os.getenv("OPENAI_API_KEY") or vim.fn.system({ "op", "read", "op://Private/OpenAI/credential" })
      opts.openai.key = vim.trim(key)
      require("«mod»").setup(opts)
    end,
  },
  { "lewis6991/gitsigns.nvim", commit = "«sha»" },
}
""", plugin=pick("yetone/avante.nvim", "jackMort/ChatGPT.nvim", "olimorris/codecompanion.nvim"), mod=pick("avante", "chatgpt", "codecompanion"), sha=sha1hex())
    add("neovim-lua-env-key", "none", "lua", pick("lua/plugins/ai.lua", ".config/nvim/lua/plugins/ai.lua"), text)


def nvim_lua_secret():
    tok = pick(openai_key, anthropic_key, hf_tok)()
    text = T("""
local M = {}

M.setup = function()
  require("«mod»").setup({
    api_key = "«tok»",
    model = "«model»",
    max_tokens = 2048,
    keymaps = { submit = "<C-s>", close = "<Esc>" },
  })
end

vim.keymap.set("n", "<leader>ai", "<cmd>«cmd»<cr>", { desc = "Assistant" })

return M
""", mod=pick("gp", "chatgpt", "llm"), tok=tok, model=pick("gpt-4o", "claude-3-5-sonnet-latest", "bigcode/starcoder2-15b"), cmd=pick("GpChatNew", "ChatGPT", "LLMToggle"))
    add("neovim-lua-literal-key", "secret", "lua", ".config/nvim/lua/user/assistant.lua", text, tok)


def openresty_redis_secret():
    p = pw(safe=True)
    text = T("""
-- rate limiter, runs in access_by_lua_file
local redis = require "resty.redis"
local red = redis:new()
red:set_timeouts(100, 100, 100)

local ok, err = red:connect("«h»", 6379)
if not ok then
    ngx.log(ngx.ERR, "redis connect: ", err)
    return ngx.exit(500)
end

local res, err = red:auth("«p»")
if not res then
    ngx.log(ngx.ERR, "redis auth: ", err)
    return ngx.exit(500)
end

local key = "rl:" .. ngx.var.binary_remote_addr
local count = red:incr(key)
if count == 1 then red:expire(key, 60) end
red:set_keepalive(10000, 100)
if tonumber(count) > «lim» then
    return ngx.exit(429)
end
""", h=pick("10.0.3.21", "redis.internal", "127.0.0.1"), p=p, lim=pick(60, 120, 600))
    add("openresty-redis-auth", "secret", "lua", pick("lua/ratelimit.lua", "nginx/lua/access.lua"), text, p)


def openresty_env_none():
    text = T("""
-- shared config for OpenResty workers
local _M = {}

_M.redis_host = os.getenv("REDIS_HOST") or "127.0.0.1"
_M.redis_password = os.getenv("REDIS_PASSWORD")
_M.jwt_secret = os.getenv("JWT_SECRET") or error("JWT_SECRET not set")

-- public key used to verify tokens issued by the auth service
_M.jwt_public_key = [[
«pub»
]]

_M.upstream_checksum = "«sha»"

return _M
""", pub=pick(public_key, ec_public_key)(), sha=sha256hex())
    add("openresty-env-and-pubkey", "none", "lua", "lua/config.lua", text)


def redis_lua_script_none():
    text = T("""
--[[
  Atomically move a job from waiting to active.
  KEYS[1] waiting list, KEYS[2] active list, KEYS[3] job hash prefix
  ARGV[1] token, ARGV[2] lock duration
  Loaded with SCRIPT LOAD; SHA1 «sha»
]]
local jobId = redis.call("RPOPLPUSH", KEYS[1], KEYS[2])
if jobId then
  local jobKey = KEYS[3] .. jobId
  redis.call("SET", jobKey .. ":lock", ARGV[1], "PX", ARGV[2])
  redis.call("HSET", jobKey, "processedOn", ARGV[3])
  return {jobId, redis.call("HGETALL", jobKey)}
end
return nil
""", sha=sha1hex())
    add("redis-lua-script-sha", "none", "lua", "src/commands/moveToActive-%d.lua" % R.randrange(3, 9), text)


# ================================================================= Perl
def perl_dbi_secret():
    p = pw()
    text = T("""
#!/usr/bin/perl
use strict;
use warnings;
use DBI;

my $dsn  = "DBI:«drv»:database=«db»;host=«h»;port=«port»";
my $user = "«u»";
my $pass = '«p»';

my $dbh = DBI->connect($dsn, $user, $pass, { RaiseError => 1, AutoCommit => 0 })
    or die "Cannot connect: $DBI::errstr";

my $sth = $dbh->prepare("SELECT id, email FROM customers WHERE created_at > ?");
$sth->execute($ARGV[0] // '2024-01-01');
while (my $row = $sth->fetchrow_hashref) {
    printf "%d\\t%s\\n", $row->{id}, $row->{email};
}
$dbh->disconnect;
""", drv=pick("mysql", "Pg", "MariaDB"), db=app(), h=host(), port=pick(3306, 5432), u=user(), p=p)
    add("perl-dbi-password", "secret", "pl", pick("bin/export_customers.pl", "scripts/report.pl"), text, p)


def perl_env_none():
    text = T("""
package «App»::Config;
use strict;
use warnings;

our %CONFIG = (
    db_dsn      => $ENV{«APP»_DSN}      // 'dbi:SQLite:dbname=dev.db',
    db_user     => $ENV{«APP»_DB_USER}  // 'dev',
    db_password => $ENV{«APP»_DB_PASS}  // '',
    api_token   => $ENV{«APP»_API_TOKEN},
    session_key => undef,   # set in local.pl, not in git
    # HMAC-SHA256 test vector (RFC 4231, case 2) used by t/hmac.t
    hmac_test_key  => 'Jefe',
    hmac_test_mac  => '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
);

sub get { my ($class, $k) = @_; return $CONFIG{$k} }

1;
""", App=app().capitalize(), APP=app().upper())
    add("perl-env-config", "none", "pm", "lib/%s/Config.pm" % app().capitalize(), text)


def perl_lwp_secret():
    tok = pick(glpat, ghp, do_tok)()
    text = T("""
#!/usr/bin/env perl
use strict;
use warnings;
use LWP::UserAgent;
use JSON::PP qw(decode_json);

my $ua = LWP::UserAgent->new(timeout => 20);
$ua->default_header('«hdr»' => '«pre»«tok»');

my $res = $ua->get('«url»');
die $res->status_line unless $res->is_success;
for my $item (@{ decode_json($res->decoded_content) }) {
    print "$item->{name}\\n";
}
""", tok=tok,
        hdr={"glpat": "PRIVATE-TOKEN", "ghp_": "Authorization", "dop_": "Authorization"}[tok[:5] if tok.startswith("glpat") else tok[:4]],
        pre={"glpat": "", "ghp_": "token ", "dop_": "Bearer "}[tok[:5] if tok.startswith("glpat") else tok[:4]],
        url={"glpat": "https://gitlab.%s.org/api/v4/projects" % org(), "ghp_": "https://api.github.com/user/repos",
             "dop_": "https://api.digitalocean.com/v2/droplets"}[tok[:5] if tok.startswith("glpat") else tok[:4]])
    add("perl-lwp-header-token", "secret", "pl", "tools/list_projects.pl", text, tok)


# ================================================================= PHP
def wp_config_secret():
    p = pw()
    text = T("""
<?php
/**
 * The base configuration for WordPress
 *
 * @package WordPress
 */

// ** Database settings - You can get this info from your web host ** //
define( 'DB_NAME', '«db»' );
define( 'DB_USER', '«u»' );
define( 'DB_PASSWORD', '«p»' );
define( 'DB_HOST', '«h»' );
define( 'DB_CHARSET', 'utf8mb4' );
define( 'DB_COLLATE', '' );

/**#@+
 * Authentication unique keys and salts.
 * Change these to different unique phrases! You can generate these using
 * the {@link https://api.wordpress.org/secret-key/1.1/salt/ WordPress.org secret-key service}.
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

$table_prefix = '«tp»_';

define( 'WP_DEBUG', false );

if ( ! defined( 'ABSPATH' ) ) {
	define( 'ABSPATH', __DIR__ . '/' );
}
require_once ABSPATH . 'wp-settings.php';
""", db="wp_" + app(), u=pick("wpuser", "wp_admin", "blog"), p=p, h=pick("localhost", "mysql:3306", host()), tp=rs(4, LOWER))
    add("wp-config-db-password", "secret", "php", pick("wp-config.php", "public/wp-config.php"), text, p)


def wp_config_none():
    text = T("""
<?php
// Bedrock-style config: every secret comes from the environment (.env is not in git).
use Roots\\WPConfig\\Config;
use function Env\\env;

Config::define('DB_NAME', env('DB_NAME'));
Config::define('DB_USER', env('DB_USER'));
Config::define('DB_PASSWORD', env('DB_PASSWORD'));
Config::define('DB_HOST', env('DB_HOST') ?: 'localhost');
$table_prefix = env('DB_PREFIX') ?: 'wp_';

Config::define('AUTH_KEY', env('AUTH_KEY'));
Config::define('SECURE_AUTH_KEY', env('SECURE_AUTH_KEY'));
Config::define('LOGGED_IN_KEY', env('LOGGED_IN_KEY'));
Config::define('NONCE_KEY', env('NONCE_KEY'));
Config::define('AUTH_SALT', env('AUTH_SALT'));
Config::define('SECURE_AUTH_SALT', env('SECURE_AUTH_SALT'));
Config::define('LOGGED_IN_SALT', env('LOGGED_IN_SALT'));
Config::define('NONCE_SALT', env('NONCE_SALT'));

Config::define('WP_CACHE_KEY_SALT', getenv('WP_CACHE_KEY_SALT') ?: '«site»:');
Config::define('DISALLOW_FILE_EDIT', true);
Config::apply();
""", site=pick("blog", "shop", "docs"))
    add("wp-config-env", "none", "php", "config/application.php", text)


def wp_salts_secret():
    # one salt defined; the rest reference env: exactly one live value
    salt = rs(64, ALNUM + "!#%*-_+=.^@()[]{};:,<>|~")
    text = T("""
<?php
// wp-salt.php, included from wp-config.php
define( 'AUTH_KEY',         getenv('WP_AUTH_KEY') );
define( 'SECURE_AUTH_KEY',  getenv('WP_SECURE_AUTH_KEY') );
define( 'LOGGED_IN_KEY',    '«s»' );
define( 'NONCE_KEY',        getenv('WP_NONCE_KEY') );
define( 'AUTH_SALT',        getenv('WP_AUTH_SALT') );
""", s=salt.replace("'", ""))
    salt = salt.replace("'", "")
    add("wp-salt-literal", "secret", "php", "wp-salt.php", text, salt)


def symfony_env_none():
    text = T("""
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
APP_ENV=dev
APP_SECRET=
###< symfony/framework-bundle ###

###> doctrine/doctrine-bundle ###
# DATABASE_URL="sqlite:///%kernel.project_dir%/var/data.db"
# DATABASE_URL="mysql://app:!ChangeMe!@127.0.0.1:3306/app?serverVersion=8.0.32&charset=utf8mb4"
DATABASE_URL="postgresql://app:!ChangeMe!@127.0.0.1:5432/app?serverVersion=16&charset=utf8"
###< doctrine/doctrine-bundle ###

###> symfony/messenger ###
MESSENGER_TRANSPORT_DSN=doctrine://default?auto_setup=0
###< symfony/messenger ###

###> symfony/mailer ###
MAILER_DSN=null://null
###< symfony/mailer ###

###> lexik/jwt-authentication-bundle ###
JWT_SECRET_KEY=%kernel.project_dir%/config/jwt/private.pem
JWT_PUBLIC_KEY=%kernel.project_dir%/config/jwt/public.pem
JWT_PASSPHRASE=
###< lexik/jwt-authentication-bundle ###
""")
    add("symfony-dotenv-defaults", "none", "env", ".env", text)


def symfony_env_local_secret():
    kind = R.randrange(3)
    if kind == 0:
        p = pw(safe=True)
        line = 'DATABASE_URL="postgresql://%s:%s@%s:5432/%s?serverVersion=15&charset=utf8"' % (user(), p, host(), app())
        sec = p
    elif kind == 1:
        p = pw(safe=True)
        line = 'MAILER_DSN=smtp://%s:%s@smtp.mailgun.org:587' % ("postmaster%40mg." + org() + ".com", p)
        sec = p
    else:
        sec = hexs(32)
        line = "APP_SECRET=%s" % sec
    text = T("""
# .env.prod.local — generated by deploy, do not commit (it was committed anyway)
APP_ENV=prod
APP_DEBUG=0
«line»
MESSENGER_TRANSPORT_DSN=doctrine://default
TRUSTED_PROXIES=127.0.0.1,REMOTE_ADDR
""", line=line)
    add("symfony-dotenv-local", "secret", "local", ".env.prod.local", text, sec)


def symfony_parameters_none():
    text = T("""
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
""")
    add("symfony-parameters-dist", "none", "dist", "app/config/parameters.yml.dist", text)


def symfony_parameters_secret():
    p = pw()
    text = T("""
# This file is auto-generated during the composer install
parameters:
    database_host: «h»
    database_port: 3306
    database_name: «db»
    database_user: «u»
    database_password: '«p»'
    mailer_transport: smtp
    mailer_host: 127.0.0.1
    mailer_user: null
    mailer_password: null
    secret: ThisTokenIsNotSoSecretChangeIt
    locale: en
""", h=host(), db=app() + "_prod", u=user(), p=p)
    add("symfony-parameters-yml", "secret", "yml", "app/config/parameters.yml", text, p)


def drupal_settings_secret():
    p = pw()
    text = T("""
<?php

// phpcs:ignoreFile

$databases['default']['default'] = [
  'database' => '«db»',
  'username' => '«u»',
  'password' => '«p»',
  'prefix' => '',
  'host' => '«h»',
  'port' => '3306',
  'namespace' => 'Drupal\\\\mysql\\\\Driver\\\\Database\\\\mysql',
  'driver' => 'mysql',
  'autoload' => 'core/modules/mysql/src/Driver/Database/mysql/',
];

$settings['hash_salt'] = file_get_contents(DRUPAL_ROOT . '/../salt.txt');
$settings['update_free_access'] = FALSE;
$settings['config_sync_directory'] = '../config/sync';
$settings['trusted_host_patterns'] = ['^www\\.«org»\\.org$'];
$settings['file_scan_ignore_directories'] = ['node_modules', 'bower_components'];
$settings['entity_update_batch_size'] = 50;
""", db="drupal_" + app(), u=user(), p=p, h=host(), org=org())
    add("drupal-settings-db", "secret", "php", "web/sites/default/settings.php", text, p)


def drupal_settings_hashsalt_secret():
    salt = b64url(55)
    text = T("""
<?php
// settings.local.php is not tracked; this file is.
$databases['default']['default'] = [
  'database' => getenv('MYSQL_DATABASE'),
  'username' => getenv('MYSQL_USER'),
  'password' => getenv('MYSQL_PASSWORD'),
  'host' => getenv('MYSQL_HOST'),
  'driver' => 'mysql',
];

$settings['hash_salt'] = '«s»';
$settings['config_sync_directory'] = '../config/sync';
if (file_exists($app_root . '/' . $site_path . '/settings.local.php')) {
  include $app_root . '/' . $site_path . '/settings.local.php';
}
""", s=salt)
    add("drupal-settings-hash-salt", "secret", "php", "web/sites/default/settings.php", text, salt)


def drupal_settings_none():
    text = T("""
<?php
// Pantheon / platform settings: credentials injected by the platform.
$platform = json_decode(getenv('PLATFORM_RELATIONSHIPS') ?: '{}', TRUE);
$databases['default']['default'] = [
  'driver' => 'pgsql',
  'database' => $platform['database'][0]['path'] ?? 'main',
  'username' => $platform['database'][0]['username'] ?? 'main',
  'password' => $platform['database'][0]['password'] ?? '',
  'host' => $platform['database'][0]['host'] ?? 'localhost',
];
$settings['hash_salt'] = getenv('PLATFORM_PROJECT_ENTROPY') ?: '';
$config['system.site']['uuid'] = '«g»';
$settings['deployment_identifier'] = '«sha»';
""", g=guid(), sha=sha1hex())
    add("drupal-settings-platform-env", "none", "php", "web/sites/default/settings.platform.php", text)


def composer_auth_secret():
    tok = pick(ghp, glpat)()
    if tok.startswith("ghp_"):
        body = '{\n    "github-oauth": {\n        "github.com": "%s"\n    }\n}\n' % tok
    else:
        body = '{\n    "gitlab-token": {\n        "gitlab.%s.com": "%s"\n    },\n    "gitlab-domains": ["gitlab.%s.com"]\n}\n' % (org(), tok, org())
    add("composer-auth-json", "secret", "json", "auth.json", body, tok)


def composer_auth_http_basic_secret():
    p = pw(safe=True)
    body = json.dumps({"http-basic": {"repo.packagist.com": {"username": "token", "password": p},
                                      "satis.%s.dev" % org(): {"username": "${SATIS_USER}", "password": "${SATIS_PASSWORD}"}}}, indent=4) + "\n"
    add("composer-auth-http-basic", "secret", "json", pick("auth.json", "docker/composer/auth.json"), body, p)


def composer_lock_none():
    pk = []
    for n, v in [("symfony/console", "v6.4.3"), ("monolog/monolog", "3.5.0"), ("guzzlehttp/guzzle", "7.8.1")]:
        s = sha1hex()
        pk.append({"name": n, "version": v,
                   "source": {"type": "git", "url": "https://github.com/%s.git" % n, "reference": s},
                   "dist": {"type": "zip", "url": "https://api.github.com/repos/%s/zipball/%s" % (n, s), "reference": s, "shasum": ""},
                   "require": {"php": ">=8.1"}, "type": "library", "time": "2024-0%d-1%dT10:00:00+00:00" % (R.randrange(1, 9), R.randrange(0, 9))})
    d = {"_readme": ["This file locks the dependencies of your project to a known state",
                     "Read more about it at https://getcomposer.org/doc/01-basic-usage.md#installing-dependencies",
                     "This file is @generated automatically"],
         "content-hash": hexs(32), "packages": pk, "packages-dev": [], "aliases": [], "minimum-stability": "stable",
         "stability-flags": [], "prefer-stable": False, "prefer-lowest": False, "platform": {"php": "^8.2"},
         "platform-dev": [], "plugin-api-version": "2.6.0"}
    add("composer-lock-hashes", "none", "lock", "composer.lock", json.dumps(d, indent=4) + "\n")


# ================================================================= Haskell / Elixir / Clojure / Erlang
def elixir_prod_secret():
    skb = b64(48)
    text = T("""
# In this file, we keep production configuration that
# you'll likely want to automate and keep away from
# your version control system.
import Config

config :«app», «App»Web.Endpoint,
  http: [port: String.to_integer(System.get_env("PORT") || "4000")],
  secret_key_base: "«skb»"

config :«app», «App».Repo,
  username: System.get_env("DB_USER"),
  password: System.get_env("DB_PASS"),
  database: "«app»_prod",
  pool_size: 15
""", app=app(), App=app().capitalize(), skb=skb)
    add("elixir-prod-secret-exs", "secret", "exs", "config/prod.secret.exs", text, skb)


def elixir_runtime_none():
    text = T("""
import Config

if config_env() == :prod do
  database_url =
    System.get_env("DATABASE_URL") ||
      raise \"\"\"
      environment variable DATABASE_URL is missing.
      For example: ecto://USER:PASS@HOST/DATABASE
      \"\"\"

  config :«app», «App».Repo,
    url: database_url,
    pool_size: String.to_integer(System.get_env("POOL_SIZE") || "10")

  secret_key_base =
    System.get_env("SECRET_KEY_BASE") ||
      raise "environment variable SECRET_KEY_BASE is missing. You can generate one by calling: mix phx.gen.secret"

  config :«app», «App»Web.Endpoint,
    url: [host: "«app».«org».io", port: 443, scheme: "https"],
    secret_key_base: secret_key_base
end
""", app=app(), App=app().capitalize(), org=org())
    add("elixir-runtime-env", "none", "exs", "config/runtime.exs", text)


def elixir_config_salts_none():
    text = T("""
import Config

config :«app»,
  ecto_repos: [«App».Repo],
  generators: [timestamp_type: :utc_datetime]

# Configures the endpoint
config :«app», «App»Web.Endpoint,
  url: [host: "localhost"],
  adapter: Bandit.PhoenixAdapter,
  render_errors: [formats: [html: «App»Web.ErrorHTML, json: «App»Web.ErrorJSON], layout: false],
  pubsub_server: «App».PubSub,
  live_view: [signing_salt: "«s1»"]

config :«app», «App»Web.Endpoint,
  session: [store: :cookie, key: "_«app»_key", signing_salt: "«s2»", same_site: "Lax"]

config :esbuild,
  version: "0.17.11",
  «app»: [args: ~w(js/app.js --bundle --target=es2017 --outdir=../priv/static/assets)]

import_config "#{config_env()}.exs"
""", app=app(), App=app().capitalize(), s1=rs(8), s2=rs(8))
    add("phoenix-config-signing-salts", "none", "exs", "config/config.exs", text)


def erlang_vm_args_secret():
    cookie = rs(20, UPPER)
    text = T("""
## Name of the node
-name «app»@127.0.0.1

## Cookie for distributed erlang
-setcookie «c»

## Heartbeat management; auto-restarts VM if it dies or becomes unresponsive
-heart

## Enable kernel poll and a few async threads
+K true
+A 64

## Increase number of concurrent ports/sockets
-env ERL_MAX_PORTS 65536
""", app=app(), c=cookie)
    add("erlang-vm-args-cookie", "secret", "args", pick("config/vm.args", "rel/vm.args"), text, cookie)


def erlang_sys_config_none():
    text = T("""
[
  {kernel, [
    {logger_level, info},
    {inet_dist_listen_min, 9100},
    {inet_dist_listen_max, 9155}
  ]},
  {«app», [
    {http_port, 8080},
    {db_url, {env, "DATABASE_URL"}},
    {api_token, {env, "«APP»_API_TOKEN"}},
    {cluster_cookie_file, "/run/secrets/erlang_cookie"},
    {build_id, <<"«bid»">>}
  ]},
  {ssl, [{protocol_version, ['tlsv1.3', 'tlsv1.2']}]}
].
""", app=app(), APP=app().upper(), bid=hexs(32))
    add("erlang-sys-config-env", "none", "config", "config/sys.config", text)


def clojure_profiles_secret():
    p = pw(safe=True)
    text = T("""
;; profiles.clj — local dev profile
{:dev {:env {:database-url "jdbc:postgresql://«h»:5432/«db»?user=«u»&password=«p»"
             :port "3000"
             :log-level "debug"}
       :dependencies [[ring/ring-mock "0.4.0"]
                      [org.clojure/test.check "1.1.1"]]}
 :test {:env {:database-url #env TEST_DATABASE_URL}}}
""", h=host(), db=app(), u=user(), p=p)
    add("clojure-profiles-jdbc", "secret", "clj", "profiles.clj", text, p)


def clojure_deps_none():
    text = T("""
{:paths ["src" "resources"]
 :deps {org.clojure/clojure {:mvn/version "1.11.1"}
        ring/ring-core {:mvn/version "1.11.0"}
        «org»/«app»-client {:git/url "https://github.com/«org»/«app»-client"
                             :git/sha "«sha»"
                             :git/tag "v0.«m».0"}}
 :mvn/repos {"private" {:url "https://maven.«org».dev/releases"}}
 :aliases
 {:test {:extra-paths ["test"]
         :extra-deps {io.github.cognitect-labs/test-runner
                      {:git/tag "v0.5.1" :git/sha "dfb30dd"}}
         :main-opts ["-m" "cognitect.test-runner"]}
  :dev {:jvm-opts ["-Dconf=dev-config.edn"]}}}
""", org=org(), app=app(), sha=sha1hex(), m=R.randrange(1, 20))
    add("clojure-deps-git-sha", "none", "edn", "deps.edn", text)


def haskell_config_secret():
    tok = pick(slack_bot, telegram, discord_hook)()
    text = T("""
{-# LANGUAGE OverloadedStrings #-}
module Config
  ( Config(..)
  , defaultConfig
  ) where

import Data.Text (Text)

data Config = Config
  { cfgPort     :: Int
  , cfgLogLevel :: Text
  , cfgNotify   :: Text
  } deriving (Show)

defaultConfig :: Config
defaultConfig = Config
  { cfgPort     = «port»
  , cfgLogLevel = "info"
  , cfgNotify   = "«tok»"
  }
""", port=pick(8080, 3000, 8000), tok=tok)
    add("haskell-config-literal", "secret", "hs", "src/Config.hs", text, tok)


def haskell_stack_none():
    text = T("""
resolver: lts-22.«n»
packages:
  - .
extra-deps:
  - git: https://github.com/«org»/«app»-hs.git
    commit: «sha»
  - servant-0.20.1@sha256:«h»,«sz»
  - aeson-2.1.2.1@rev:2
ghc-options:
  "$locals": -Wall -Werror
nix:
  enable: false
""", n=R.randrange(1, 30), org=org(), app=app(), sha=sha1hex(), h=sha256hex(), sz=R.randrange(3000, 9000))
    add("haskell-stack-yaml-hashes", "none", "yaml", "stack.yaml", text)


# ================================================================= Julia / R
def julia_project_none():
    deps = ["HTTP", "JSON3", "DataFrames", "CSV", "Dates"]
    text = "name = \"%s\"\nuuid = \"%s\"\nauthors = [\"%s <dev@%s.org>\"]\nversion = \"0.%d.0\"\n\n[deps]\n" % (
        app().capitalize() + "Tools", guid(), pick("Ana Ruiz", "Jonas Berg", "Mei Lin"), org(), R.randrange(1, 9))
    for d in deps:
        text += "%s = \"%s\"\n" % (d, guid())
    text += "\n[compat]\nHTTP = \"1\"\nJSON3 = \"1.14\"\njulia = \"1.9\"\n"
    add("julia-project-uuids", "none", "toml", "Project.toml", text)


def julia_manifest_none():
    text = "# This file is machine-generated - editing it directly is not advised\n\njulia_version = \"1.10.2\"\nmanifest_format = \"2.0\"\nproject_hash = \"%s\"\n" % sha1hex()
    for d in ["CodecZlib", "HTTP", "OpenSSL_jll", "URIs"]:
        text += "\n[[deps.%s]]\ndeps = [\"Base64\", \"Dates\"]\ngit-tree-sha1 = \"%s\"\nuuid = \"%s\"\nversion = \"%d.%d.%d\"\n" % (d, sha1hex(), guid(), R.randrange(0, 4), R.randrange(0, 20), R.randrange(0, 9))
    add("julia-manifest-tree-sha", "none", "toml", "Manifest.toml", text)


def julia_script_secret():
    p = pw(safe=True)
    text = T("""
using LibPQ, DataFrames

const CONN_STR = "host=«h» port=5432 dbname=«db» user=«u» password=«p» sslmode=require"

function load_events(since::String)
    conn = LibPQ.Connection(CONN_STR)
    try
        return DataFrame(execute(conn, "SELECT * FROM events WHERE ts > \\$1", [since]))
    finally
        close(conn)
    end
end
""", h=host(), db=app(), u=user(), p=p)
    add("julia-libpq-conninfo", "secret", "jl", "src/db.jl", text, p)


def renviron_secret():
    tok = pick(ghp, gh_fine)()
    text = T("""
R_LIBS_USER=~/R/library/%v
GITHUB_PAT=«tok»
_R_CHECK_FORCE_SUGGESTS_=false
R_MAX_NUM_DLLS=500
""", tok=tok)
    add("r-renviron-github-pat", "secret", "renviron", ".Renviron", text, tok)


def renviron_db_secret():
    p = pw(safe=True)
    text = T("""
# project-local environment, read by R at startup
DB_HOST=«h»
DB_USER=«u»
DB_PASSWORD=«p»
DB_NAME=«db»
RENV_CONFIG_PAK_ENABLED=TRUE
""", h=host(), u=user(), p=p, db=app())
    add("r-renviron-db-password", "secret", "renviron", pick(".Renviron", "analysis/.Renviron"), text, p)


def rprofile_none():
    text = T("""
# .Rprofile
source("renv/activate.R")
options(
  repos = c(CRAN = "https://packagemanager.posit.co/cran/__linux__/jammy/latest"),
  width = 120,
  scipen = 999
)

if (interactive()) {
  suppressMessages(require(usethis))
  # credentials: gitcreds::gitcreds_set() stores the PAT in the OS keychain
  if (nzchar(Sys.getenv("GITHUB_PAT")) == FALSE) {
    message("No GITHUB_PAT set; run gitcreds::gitcreds_set()")
  }
}

.db <- function() DBI::dbConnect(
  RPostgres::Postgres(),
  host = Sys.getenv("DB_HOST"),
  user = Sys.getenv("DB_USER"),
  password = keyring::key_get("«app»-db", Sys.getenv("DB_USER"))
)
""", app=app())
    add("r-rprofile-keyring", "none", "rprofile", ".Rprofile", text)


def renv_lock_none():
    pk = {}
    for n, v in [("renv", "1.0.7"), ("DBI", "1.2.2"), ("httr2", "1.0.1"), ("jsonlite", "1.8.8")]:
        pk[n] = {"Package": n, "Version": v, "Source": "Repository", "Repository": "CRAN", "Hash": hexs(32)}
    d = {"R": {"Version": "4.3.3", "Repositories": [{"Name": "CRAN", "URL": "https://cloud.r-project.org"}]}, "Packages": pk}
    add("r-renv-lock-hashes", "none", "lock", "renv.lock", json.dumps(d, indent=2) + "\n")


# ================================================================= PowerShell / batch
def ps1_securestring_secret():
    p = pw()
    text = T("""
#Requires -Modules Az.Accounts
param(
    [string]$ResourceGroup = "rg-«app»-prod",
    [string]$VmName = "vm-«app»-01"
)

$User = "«dom»\\svc-«app»"
$SecurePassword = ConvertTo-SecureString "«p»" -AsPlainText -Force
$Credential = New-Object System.Management.Automation.PSCredential ($User, $SecurePassword)

Invoke-Command -ComputerName $VmName -Credential $Credential -ScriptBlock {
    Restart-Service -Name "«App»Worker" -Force
    Get-Service -Name "«App»Worker"
}
""", app=app(), App=app().capitalize(), dom=pick("CORP", "AD", "NW"), p=p.replace('"', ""))
    add("powershell-securestring-plain", "secret", "ps1", "scripts/Restart-Worker.ps1", text, p.replace('"', ""))


def ps1_none():
    text = T("""
[CmdletBinding()]
param(
    [Parameter(Mandatory)][string]$Environment,
    [pscredential]$Credential = (Get-Credential -Message "Deploy account")
)

$ErrorActionPreference = 'Stop'
$token = $env:AZURE_DEVOPS_PAT
if (-not $token) { throw "Set AZURE_DEVOPS_PAT first" }

# Secrets are read from the SecretManagement vault, never stored here
$dbPassword = Get-Secret -Name "«app»-$Environment-db" -AsPlainText
$encoded = [Convert]::ToBase64String([Text.Encoding]::ASCII.GetBytes(":$token"))
$headers = @{ Authorization = "Basic $encoded" }

$thumb = "«thumb»"   # signing certificate thumbprint
Set-AuthenticodeSignature -FilePath .\\out\\«app».msi -Certificate (Get-ChildItem Cert:\\CurrentUser\\My\\$thumb)
Invoke-RestMethod -Uri "https://dev.azure.com/«org»/_apis/projects?api-version=7.0" -Headers $headers
""", app=app(), org=org(), thumb=sha1hex().upper())
    add("powershell-secretmanagement", "none", "ps1", pick("build/Deploy.ps1", "tools/publish.ps1"), text)


def ps1_dsc_encrypted_none():
    # SecureString exported with DPAPI: encrypted blob, not usable elsewhere
    blob = "01000000d08c9ddf0115d1118c7a00c04fc297eb01000000" + hexs(R.randrange(200, 300) * 2)
    text = T("""
# Encrypted with ConvertFrom-SecureString on the build host (DPAPI, machine scope).
$enc = "«blob»"
$pw = ConvertTo-SecureString $enc
$cred = [pscredential]::new("svc-backup", $pw)
Start-Job -Credential $cred -ScriptBlock { robocopy D:\\data \\\\nas01\\backup /MIR }
""", blob=blob)
    add("powershell-dpapi-blob", "none", "ps1", "scripts/backup.ps1", text)


def bat_secret():
    p = pw(safe=True)
    text = T("""
@echo off
setlocal
REM nightly export of the reporting DB
set PGHOST=«h»
set PGUSER=«u»
set PGPASSWORD=«p»
set OUT=D:\\exports\\%DATE:~-4%%DATE:~3,2%%DATE:~0,2%.sql

"C:\\Program Files\\PostgreSQL\\16\\bin\\pg_dump.exe" -Fc -d «db» -f "%OUT%"
if errorlevel 1 (
  echo export failed
  exit /b 1
)
endlocal
""", h=host(), u=user(), p=p, db=app())
    add("batch-pgpassword", "secret", "bat", pick("scripts/nightly_export.bat", "ops/export.bat"), text, p)


def cmd_none():
    text = T("""
@echo off
:: Publishes the NuGet package. The API key comes from the CI secret store.
if "%NUGET_API_KEY%"=="" (
  echo NUGET_API_KEY is not set & exit /b 1
)
set PKG=«App».Core.%1.nupkg
dotnet nuget push artifacts\\%PKG% --api-key %NUGET_API_KEY% --source https://api.nuget.org/v3/index.json
certutil -hashfile artifacts\\%PKG% SHA256
:: expected: «sha»
""", App=app().capitalize(), sha=sha256hex())
    add("cmd-env-refs", "none", "cmd", "publish.cmd", text)


def cmd_secret():
    tok = pick(npm_tok, crates_tok, sentry_user)()
    what = {"npm": ("npm config set //registry.npmjs.org/:_authToken ", "npm publish --access public"),
            "cio": ("cargo login ", "cargo publish"), "snt": ("set SENTRY_AUTH_TOKEN=", "sentry-cli releases new %VERSION%")}[tok[:3]]
    text = T("""
@echo off
REM release helper (Windows build box)
set VERSION=%1
«a»«tok»
«b»
""", a=what[0], tok=tok, b=what[1])
    add("cmd-release-token", "secret", "cmd", "release.cmd", text, tok)


# ================================================================= Nix
def flake_lock_none():
    nodes = {}
    for n, o, r in [("nixpkgs", "NixOS", "nixpkgs"), ("flake-utils", "numtide", "flake-utils"), ("rust-overlay", "oxalica", "rust-overlay")]:
        nodes[n] = {"locked": {"lastModified": R.randrange(1700000000, 1730000000), "narHash": nix_sri(), "owner": o, "repo": r, "rev": sha1hex(), "type": "github"},
                    "original": {"owner": o, "repo": r, "type": "github"}}
    nodes["root"] = {"inputs": {k: k for k in list(nodes)}}
    add("nix-flake-lock", "none", "lock", "flake.lock", json.dumps({"nodes": nodes, "root": "root", "version": 7}, indent=2) + "\n")


def flake_nix_none():
    text = T("""
{
  description = "«app» dev shell";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-24.05";
  inputs.flake-utils.url = "github:numtide/flake-utils";

  outputs = { self, nixpkgs, flake-utils }:
    flake-utils.lib.eachDefaultSystem (system:
      let
        pkgs = import nixpkgs { inherit system; };
        protoc-gen = pkgs.fetchurl {
          url = "https://github.com/«org»/protoc-gen-«app»/releases/download/v1.«m».0/protoc-gen-«app»-linux-amd64";
          hash = "«h1»";
        };
        vendor = pkgs.fetchFromGitHub {
          owner = "«org»";
          repo = "«app»-vendor";
          rev = "«rev»";
          sha256 = "«h2»";
        };
      in {
        devShells.default = pkgs.mkShell {
          packages = [ pkgs.go_1_22 pkgs.sops pkgs.age protoc-gen ];
          shellHook = ''
            export DATABASE_URL="postgres://$USER@localhost/«app»"
            export API_TOKEN="$(cat ''${XDG_RUNTIME_DIR}/«app»-token 2>/dev/null)"
          '';
        };
      });
}
""", app=app(), org=org(), m=R.randrange(0, 9), h1=nix_sri(), rev=sha1hex(), h2="sha256-" + b64(32))
    add("nix-flake-fetch-hashes", "none", "nix", "flake.nix", text)


def nixos_config_none():
    text = T("""
{ config, pkgs, ... }:

{
  imports = [ ./hardware-configuration.nix ./sops.nix ];

  networking.hostName = "«hn»";
  time.timeZone = "Europe/Berlin";

  users.mutableUsers = false;
  users.users.«un» = {
    isNormalUser = true;
    extraGroups = [ "wheel" "docker" ];
    hashedPassword = "«hash»";
    openssh.authorizedKeys.keys = [
      "«k1» «un»@laptop"
      "«k2» «un»@yubikey"
    ];
  };

  services.openssh = {
    enable = true;
    settings.PasswordAuthentication = false;
  };

  sops.secrets."restic/password" = { owner = "root"; };
  services.restic.backups.daily = {
    passwordFile = config.sops.secrets."restic/password".path;
    repository = "s3:s3.eu-central-1.amazonaws.com/«hn»-backup";
  };

  system.stateVersion = "24.05";
}
""", hn=pick("nas", "atlas", "kestrel", "tower"), un=pick("mara", "jonas", "kim"), hash=pick(sha512crypt, yescrypt)(),
        k1=ssh_ed25519_pub(), k2=ssh_ed25519_pub())
    add("nixos-hashed-password", "none", "nix", pick("configuration.nix", "hosts/nas/configuration.nix"), text)


def nixos_config_secret():
    kind = R.randrange(3)
    if kind == 0:
        sec = pw()
        body = 'users.users.%s.initialPassword = "%s";' % (pick("admin", "ops"), sec)
    elif kind == 1:
        sec = wg_key()
        body = T("""networking.wireguard.interfaces.wg0 = {
    ips = [ "10.100.0.2/24" ];
    privateKey = "«k»";
    peers = [{
      publicKey = "«pk»";
      allowedIPs = [ "10.100.0.0/24" ];
      endpoint = "vpn.«org».net:51820";
      persistentKeepalive = 25;
    }];
  };""", k=sec, pk=wg_key(), org=org())
    else:
        sec = pw(safe=True)
        body = T("""services.grafana.settings.security = {
    admin_user = "admin";
    admin_password = "«p»";
  };""", p=sec)
    text = T("""
{ config, pkgs, lib, ... }:
{
  networking.hostName = "«hn»";
  networking.firewall.allowedTCPPorts = [ 22 80 443 ];

  «body»

  environment.systemPackages = with pkgs; [ vim git htop ];
  system.stateVersion = "23.11";
}
""", hn=pick("edge01", "pi-hole", "builder"), body=body)
    add("nixos-plaintext-secret", "secret", "nix", pick("configuration.nix", "machines/edge01.nix"), text, sec)


# ================================================================= Bazel / CMake
def bazel_workspace_none():
    rows = []
    for n in ["rules_go", "bazel_gazelle", "com_google_protobuf"]:
        rows.append(T("""http_archive(
    name = "«n»",
    sha256 = "«h»",
    strip_prefix = "«n»-«v»",
    urls = ["https://github.com/bazelbuild/«n»/releases/download/v«v»/«n»-v«v».zip"],
)""", n=n, h=sha256hex(), v="0.%d.%d" % (R.randrange(20, 50), R.randrange(0, 9))))
    text = 'workspace(name = "%s")\n\nload("@bazel_tools//tools/build_defs/repo:http.bzl", "http_archive")\n\n' % app() + "\n\n".join(rows) + "\n"
    add("bazel-workspace-sha256", "none", "bazel", "WORKSPACE", text)


def module_bazel_lock_none():
    text = T("""
module(name = "«app»", version = "0.«m».0")

bazel_dep(name = "rules_python", version = "0.31.0")
bazel_dep(name = "rules_oci", version = "1.7.4")

oci = use_extension("@rules_oci//oci:extensions.bzl", "oci")
oci.pull(
    name = "distroless_base",
    digest = "sha256:«d»",
    image = "gcr.io/distroless/base",
    platforms = ["linux/amd64", "linux/arm64"],
)
use_repo(oci, "distroless_base")

archive_override(
    module_name = "«dep»",
    integrity = "«sri»",
    urls = ["https://github.com/«org»/«dep»/archive/«rev».tar.gz"],
    strip_prefix = "«dep»-«rev»",
)
""", app=app(), m=R.randrange(1, 9), d=sha256hex(), dep=pick("fmt", "abseil-cpp", "zlib"), sri=sri("sha256"), org=org(), rev=sha1hex())
    add("bazel-module-digests", "none", "bazel", "MODULE.bazel", text)


def bazelrc_secret():
    k = rs(20)
    text = T("""
build --incompatible_strict_action_env
build --remote_cache=grpcs://remote.buildbuddy.io
build --bes_results_url=https://app.buildbuddy.io/invocation/
build --bes_backend=grpcs://remote.buildbuddy.io
build --remote_header=x-buildbuddy-api-key=«k»
build --remote_timeout=3600
test --test_output=errors
try-import %workspace%/user.bazelrc
""", k=k)
    add("bazelrc-buildbuddy-key", "secret", "bazelrc", ".bazelrc", text, k)


def bazelrc_none():
    text = """build --incompatible_strict_action_env
build:ci --remote_cache=grpcs://cache.%s.dev
# CI injects the header via --config=ci and a generated file
build:ci --remote_header=x-buildbuddy-api-key=${BUILDBUDDY_API_KEY}
try-import %%workspace%%/.bazelrc.user
build --workspace_status_command=tools/workspace_status.sh
""" % org()
    add("bazelrc-env-ref", "none", "bazelrc", ".bazelrc", text)


def cmake_fetchcontent_none():
    text = T("""
cmake_minimum_required(VERSION 3.24)
project(«app» LANGUAGES CXX)

include(FetchContent)
FetchContent_Declare(
  json
  URL https://github.com/nlohmann/json/releases/download/v3.11.3/json.tar.xz
  URL_HASH SHA256=«h1»
)
FetchContent_Declare(
  spdlog
  GIT_REPOSITORY https://github.com/gabime/spdlog.git
  GIT_TAG        «rev»
)
FetchContent_MakeAvailable(json spdlog)

set(«APP»_API_KEY "" CACHE STRING "API key baked into debug builds (leave empty in CI)")
if(DEFINED ENV{«APP»_API_KEY})
  set(«APP»_API_KEY "$ENV{«APP»_API_KEY}")
endif()

add_executable(«app» src/main.cpp)
target_compile_definitions(«app» PRIVATE API_KEY="${«APP»_API_KEY}")
target_link_libraries(«app» PRIVATE nlohmann_json::nlohmann_json spdlog::spdlog)
""", app=app(), APP=app().upper(), h1=sha256hex(), rev=sha1hex())
    add("cmake-fetchcontent-hash", "none", "txt", "CMakeLists.txt", text)


def cmake_secret():
    tok = pick(google_key, mailgun, postman)()
    text = T("""
cmake_minimum_required(VERSION 3.16)
project(«app»_firmware C CXX)

set(CMAKE_CXX_STANDARD 17)
option(ENABLE_TELEMETRY "Send crash reports" ON)

if(ENABLE_TELEMETRY)
  add_compile_definitions(TELEMETRY_ENDPOINT="https://telemetry.«org».io/v1")
  add_compile_definitions(TELEMETRY_KEY="«tok»")
endif()

add_executable(«app» src/main.cpp src/telemetry.cpp)
""", app=app(), org=org(), tok=tok)
    add("cmake-compile-definition-key", "secret", "txt", "CMakeLists.txt", text, tok)


# ================================================================= Maven / NuGet / Cargo / Yarn / Bundler
def maven_settings_secret():
    p = pw()
    text = T("""
<?xml version="1.0" encoding="UTF-8"?>
<settings xmlns="http://maven.apache.org/SETTINGS/1.2.0"
          xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
          xsi:schemaLocation="http://maven.apache.org/SETTINGS/1.2.0 https://maven.apache.org/xsd/settings-1.2.0.xsd">
  <servers>
    <server>
      <id>«org»-releases</id>
      <username>«u»</username>
      <password>«p»</password>
    </server>
    <server>
      <id>«org»-snapshots</id>
      <username>${env.NEXUS_USER}</username>
      <password>${env.NEXUS_PASSWORD}</password>
    </server>
  </servers>
  <mirrors>
    <mirror>
      <id>«org»-releases</id>
      <mirrorOf>*</mirrorOf>
      <url>https://nexus.«org».internal/repository/maven-public/</url>
    </mirror>
  </mirrors>
</settings>
""", org=org(), u=user(), p=p)
    add("maven-settings-plain-password", "secret", "xml", pick(".mvn/settings.xml", "ci/settings.xml"), text, p)


def maven_settings_none():
    text = T("""
<settings>
  <servers>
    <server>
      <id>ossrh</id>
      <username>${env.OSSRH_USERNAME}</username>
      <password>${env.OSSRH_TOKEN}</password>
    </server>
    <server>
      <id>github</id>
      <username>${env.GITHUB_ACTOR}</username>
      <password>${env.GITHUB_TOKEN}</password>
    </server>
    <server>
      <id>gpg.passphrase</id>
      <passphrase>${env.MAVEN_GPG_PASSPHRASE}</passphrase>
    </server>
  </servers>
  <profiles>
    <profile>
      <id>release</id>
      <properties>
        <gpg.keyname>«fp»</gpg.keyname>
      </properties>
    </profile>
  </profiles>
</settings>
""", fp=pgp_fpr())
    add("maven-settings-env-refs", "none", "xml", ".github/maven-settings.xml", text)


def pom_none():
    text = T("""
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.«org»</groupId>
  <artifactId>«app»-service</artifactId>
  <version>2.«m».0-SNAPSHOT</version>
  <properties>
    <java.version>21</java.version>
    <db.password>${env.DB_PASSWORD}</db.password>
    <sonar.login>${env.SONAR_TOKEN}</sonar.login>
    <git.commit.id>«sha»</git.commit.id>
  </properties>
  <build>
    <plugins>
      <plugin>
        <groupId>org.flywaydb</groupId>
        <artifactId>flyway-maven-plugin</artifactId>
        <configuration>
          <url>jdbc:postgresql://localhost:5432/«app»</url>
          <user>«app»</user>
          <password>${db.password}</password>
        </configuration>
      </plugin>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-enforcer-plugin</artifactId>
        <configuration>
          <rules><requireChecksum><checksum>«sha256»</checksum><type>sha256</type></requireChecksum></rules>
        </configuration>
      </plugin>
    </plugins>
  </build>
</project>
""", org=org(), app=app(), m=R.randrange(0, 9), sha=sha1hex(), sha256=sha256hex())
    add("maven-pom-property-refs", "none", "xml", "pom.xml", text)


def pom_secret():
    p = pw()
    text = T("""
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.«org»</groupId>
  <artifactId>«app»-db</artifactId>
  <version>1.0.0</version>
  <build>
    <plugins>
      <plugin>
        <groupId>org.liquibase</groupId>
        <artifactId>liquibase-maven-plugin</artifactId>
        <version>4.26.0</version>
        <configuration>
          <changeLogFile>db/changelog/master.xml</changeLogFile>
          <url>jdbc:mysql://«h»:3306/«app»</url>
          <username>«u»</username>
          <password>«p»</password>
        </configuration>
      </plugin>
    </plugins>
  </build>
</project>
""", org=org(), app=app(), h=host(), u=user(), p=p)
    add("maven-pom-liquibase-password", "secret", "xml", "db/pom.xml", text, p)


def nuget_config_secret():
    p = pick(lambda: rs(52, LOWER + DIGITS), pw)()
    text = T("""
<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <clear />
    <add key="nuget.org" value="https://api.nuget.org/v3/index.json" protocolVersion="3" />
    <add key="«org»" value="https://pkgs.dev.azure.com/«org»/_packaging/«feed»/nuget/v3/index.json" />
  </packageSources>
  <packageSourceCredentials>
    <«org»>
      <add key="Username" value="«u»" />
      <add key="ClearTextPassword" value="«p»" />
    </«org»>
  </packageSourceCredentials>
</configuration>
""", org=org(), feed=pick("internal", "shared-libs"), u=user(), p=p)
    add("nuget-config-cleartext", "secret", "config", "NuGet.config", text, p)


def nuget_config_none():
    text = T("""
<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <add key="github" value="https://nuget.pkg.github.com/«org»/index.json" />
  </packageSources>
  <packageSourceCredentials>
    <github>
      <add key="Username" value="%GITHUB_ACTOR%" />
      <add key="ClearTextPassword" value="%GITHUB_TOKEN%" />
    </github>
  </packageSourceCredentials>
  <trustedSigners>
    <repository name="nuget.org" serviceIndex="https://api.nuget.org/v3/index.json">
      <certificate fingerprint="«fp»" hashAlgorithm="SHA256" allowUntrustedRoot="false" />
      <owners>Microsoft;«org»</owners>
    </repository>
  </trustedSigners>
</configuration>
""", org=org(), fp=hexs(64).upper())
    add("nuget-config-env-and-fingerprint", "none", "config", "nuget.config", text)


def csproj_none():
    text = T("""
<Project Sdk="Microsoft.NET.Sdk.Web">
  <PropertyGroup>
    <TargetFramework>net8.0</TargetFramework>
    <Nullable>enable</Nullable>
    <UserSecretsId>«g1»</UserSecretsId>
    <ProjectGuid>{«g2»}</ProjectGuid>
    <AssemblyOriginatorKeyFile>«App».snk</AssemblyOriginatorKeyFile>
    <PublicKeyToken>«pkt»</PublicKeyToken>
  </PropertyGroup>
  <ItemGroup>
    <PackageReference Include="Microsoft.EntityFrameworkCore" Version="8.0.2" />
    <PackageReference Include="Serilog.AspNetCore" Version="8.0.1" />
  </ItemGroup>
</Project>
""", g1=guid(), g2=guid(True), App=app().capitalize(), pkt=hexs(16))
    add("csproj-guids", "none", "csproj", "src/%s.Api/%s.Api.csproj" % ((app().capitalize(),) * 2), text)


def cargo_credentials_secret():
    tok = crates_tok()
    text = T("""
[registry]
token = "«tok»"

[registries.«org»]
credential-provider = "cargo:token-from-stdout op read op://Dev/«org»-registry/token"
""", tok=tok, org=org())
    add("cargo-credentials-toml", "secret", "toml", pick(".cargo/credentials.toml", "ci/cargo-home/credentials.toml"), text, tok)


def cargo_config_none():
    text = T("""
[build]
rustflags = ["-C", "target-cpu=native"]

[registries.«org»]
index = "sparse+https://crates.«org».dev/api/v1/crates/"
credential-provider = ["cargo:token"]

[registry]
global-credential-providers = ["cargo:token", "cargo:libsecret"]

[source.crates-io]
replace-with = "vendored-sources"

[source.vendored-sources]
directory = "vendor"

[net]
git-fetch-with-cli = true

[env]
DATABASE_URL = { value = "sqlite://dev.db", force = false }
SQLX_OFFLINE = "true"
""", org=org())
    add("cargo-config-providers", "none", "toml", ".cargo/config.toml", text)


def cargo_config_secret():
    tok = rs(32)
    text = T("""
[registries.«org»]
index = "sparse+https://crates.«org».dev/api/v1/crates/"
token = "Bearer «tok»"

[net]
retry = 3
""", org=org(), tok=tok)
    add("cargo-config-registry-token", "secret", "toml", ".cargo/config.toml", text, tok)


def yarnrc_secret():
    tok = pick(npm_tok, ghp)()
    scope = org()
    text = T("""
nodeLinker: node-modules
enableGlobalCache: true

npmScopes:
  «scope»:
    npmRegistryServer: "«reg»"
    npmAlwaysAuth: true
    npmAuthToken: «tok»

yarnPath: .yarn/releases/yarn-4.1.1.cjs
""", scope=scope, reg="https://npm.pkg.github.com" if tok.startswith("ghp") else "https://registry.npmjs.org", tok=tok)
    add("yarnrc-yml-auth-token", "secret", "yml", ".yarnrc.yml", text, tok)


def yarnrc_none():
    text = T("""
nodeLinker: pnp
npmScopes:
  «scope»:
    npmRegistryServer: "https://npm.pkg.github.com"
    npmAuthToken: "${NPM_AUTH_TOKEN:-}"
checksumBehavior: throw
supportedArchitectures:
  os: [linux, darwin]
yarnPath: .yarn/releases/yarn-«v».cjs
""", scope=org(), v=pick("4.0.2", "4.2.2", "3.6.4"))
    add("yarnrc-yml-env-ref", "none", "yml", ".yarnrc.yml", text)


def yarn_lock_none():
    rows = []
    for n, v in [("lodash", "4.17.21"), ("chalk", "5.3.0"), ("commander", "12.0.0"), ("semver", "7.6.0")]:
        rows.append('"%s@npm:^%s":\n  version: %s\n  resolution: "%s@npm:%s"\n  checksum: 10c0/%s\n  languageName: node\n  linkType: hard' % (n, v, v, n, v, hexs(128)))
    text = "# This file is generated by running \"yarn install\" inside your project.\n# Manual changes might be lost - proceed with caution!\n\n__metadata:\n  version: 8\n  cacheKey: 10c0\n\n" + "\n\n".join(rows) + "\n"
    add("yarn-berry-lock-checksums", "none", "lock", "yarn.lock", text)


def bundler_config_secret():
    p = rs(8, HEX) + ":" + rs(8, HEX)
    kind = R.randrange(2)
    if kind == 0:
        line = 'BUNDLE_GEMS__CONTRIBSYS__COM: "%s"' % p
        sec = p
    else:
        sec = ghp()
        line = 'BUNDLE_GITHUB__COM: "x-access-token:%s"' % sec
    text = T("""
---
BUNDLE_PATH: "vendor/bundle"
BUNDLE_JOBS: "4"
BUNDLE_WITHOUT: "development:test"
«line»
BUNDLE_DEPLOYMENT: "true"
""", line=line)
    add("bundler-config-credential", "secret", "bundle", ".bundle/config", text, sec)


def bundler_config_none():
    text = """---
BUNDLE_PATH: "vendor/bundle"
BUNDLE_JOBS: "8"
BUNDLE_RETRY: "3"
BUNDLE_FROZEN: "true"
BUNDLE_BUILD__NOKOGIRI: "--use-system-libraries"
BUNDLE_FORCE_RUBY_PLATFORM: "true"
"""
    add("bundler-config-plain", "none", "bundle", ".bundle/config", text)


# ================================================================= Helm / Kustomize / ArgoCD
def helm_values_secret():
    kind = R.randrange(3)
    if kind == 0:
        sec = pw()
        blk = T("""postgresql:
  enabled: true
  auth:
    username: «u»
    password: "«p»"
    database: «db»
    existingSecret: ""
""", u=user(), p=sec, db=app())
    elif kind == 1:
        sec = slack_hook()
        blk = T("""alertmanager:
  config:
    global:
      slack_api_url: "«h»"
    route:
      receiver: slack
""", h=sec)
    else:
        sec = pw(safe=True)
        blk = T("""redis:
  architecture: standalone
  auth:
    enabled: true
    password: «p»
""", p=sec)
    text = T("""
# Default values for «app».
replicaCount: «rc»

image:
  repository: ghcr.io/«org»/«app»
  pullPolicy: IfNotPresent
  tag: ""
  digest: sha256:«d»

serviceAccount:
  create: true
  annotations:
    eks.amazonaws.com/role-arn: arn:aws:iam::«acct»:role/«app»-irsa

«blk»
ingress:
  enabled: true
  className: nginx
  hosts:
    - host: «app».«org».io
      paths: [{path: /, pathType: Prefix}]
resources:
  limits: {cpu: 500m, memory: 512Mi}
""", app=app(), rc=R.randrange(1, 5), org=org(), d=sha256hex(), acct=digits(12), blk=blk)
    add("helm-values-inline-secret", "secret", "yaml", pick("charts/%s/values.yaml" % app(), "deploy/helm/values-prod.yaml"), text, sec)


def helm_values_none():
    text = T("""
global:
  imageRegistry: ""
  imagePullSecrets: [regcred]

auth:
  # Use an existing secret holding keys `password` and `postgres-password`
  existingSecret: «app»-db-credentials
  secretKeys:
    adminPasswordKey: postgres-password
    userPasswordKey: password
  password: ""
  postgresPassword: ""

externalSecrets:
  enabled: true
  secretStoreRef: {name: vault-backend, kind: ClusterSecretStore}
  data:
    - secretKey: api-token
      remoteRef: {key: secret/data/«app»/prod, property: api_token}

config:
  apiToken: "{{ .Values.secrets.apiToken }}"
  jwtSecret: "changeme"
  oidc:
    clientId: «cid»
    clientSecret: <REPLACE_WITH_CLIENT_SECRET>
image:
  digest: sha256:«d»
""", app=app(), cid=google_client_id(), d=sha256hex())
    add("helm-values-existing-secret", "none", "yaml", "charts/%s/values.yaml" % app(), text)


def helm_template_none():
    text = T("""
apiVersion: v1
kind: Secret
metadata:
  name: {{ include "«app».fullname" . }}
  labels:
    {{- include "«app».labels" . | nindent 4 }}
  annotations:
    checksum/config: {{ include (print $.Template.BasePath "/configmap.yaml") . | sha256sum }}
type: Opaque
data:
  {{- if .Values.auth.password }}
  password: {{ .Values.auth.password | b64enc | quote }}
  {{- else }}
  password: {{ randAlphaNum 24 | b64enc | quote }}
  {{- end }}
  api-token: {{ required "secrets.apiToken is required" .Values.secrets.apiToken | b64enc }}
""", app=app())
    add("helm-template-secret", "none", "yaml", "charts/%s/templates/secret.yaml" % app(), text)


def k8s_secret_data_secret():
    p = pw()
    enc = base64.b64encode(p.encode()).decode()
    text = T("""
apiVersion: v1
kind: Secret
metadata:
  name: «app»-db
  namespace: «ns»
type: Opaque
data:
  username: «ub»
  password: «enc»
""", app=app(), ns=pick("prod", "payments", "default"), ub=base64.b64encode(user().encode()).decode(), enc=enc)
    add("k8s-secret-base64-data", "secret", "yaml", "k8s/base/db-secret.yaml", text, enc)


def kustomize_secret():
    p = pw(safe=True)
    text = T("""
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: «ns»
resources:
  - ../../base
images:
  - name: «app»
    newName: registry.«org».io/«app»
    digest: sha256:«d»
secretGenerator:
  - name: «app»-env
    literals:
      - DB_USER=«u»
      - DB_PASSWORD=«p»
configMapGenerator:
  - name: «app»-config
    literals:
      - LOG_LEVEL=info
""", ns=pick("staging", "prod"), app=app(), org=org(), d=sha256hex(), u=user(), p=p)
    add("kustomize-secret-generator-literal", "secret", "yaml", "overlays/%s/kustomization.yaml" % pick("staging", "prod"), text, p)


def kustomize_none():
    text = T("""
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - deployment.yaml
  - service.yaml
generators:
  - ./secret-generator.yaml   # ksops decrypts secrets.enc.yaml at build time
secretGenerator:
  - name: «app»-tls
    files:
      - tls.crt=certs/«app».crt
      - tls.key=certs/«app».key
    type: kubernetes.io/tls
  - name: «app»-env
    envs:
      - .env.secret
patches:
  - target: {kind: Deployment, name: «app»}
    patch: |-
      - op: replace
        path: /spec/template/metadata/annotations/config-hash
        value: "«h»"
""", app=app(), h=hexs(10))
    add("kustomize-file-generators", "none", "yaml", "base/kustomization.yaml", text)


def argocd_repo_secret():
    tok = pick(ghp, glpat, pw)()
    text = T("""
apiVersion: v1
kind: Secret
metadata:
  name: repo-«app»
  namespace: argocd
  labels:
    argocd.argoproj.io/secret-type: repository
stringData:
  type: git
  url: https://«gh»/«org»/«app»-deploy.git
  username: «u»
  password: «tok»
""", app=app(), gh=pick("github.com", "gitlab.com"), org=org(), u=pick("argocd", "git", "oauth2"), tok=tok)
    add("argocd-repository-secret", "secret", "yaml", "argocd/repositories/%s.yaml" % app(), text, tok)


def argocd_cm_none():
    text = T("""
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
data:
  url: https://argocd.«org».io
  admin.enabled: "false"
  oidc.config: |
    name: Keycloak
    issuer: https://sso.«org».io/realms/platform
    clientID: argocd
    clientSecret: $oidc.keycloak.clientSecret
    requestedScopes: ["openid", "profile", "email", "groups"]
  dex.config: |
    connectors:
      - type: github
        id: github
        name: GitHub
        config:
          clientID: «ghcid»
          clientSecret: $dex.github.clientSecret
          orgs:
            - name: «org»
""", org=org(), ghcid="Iv1." + hexs(16))
    add("argocd-cm-secret-refs", "none", "yaml", "argocd/argocd-cm.yaml", text)


def argocd_app_none():
    text = T("""
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: «app»
  namespace: argocd
  annotations:
    notifications.argoproj.io/subscribe.on-sync-failed.slack: deploys
spec:
  project: default
  source:
    repoURL: https://github.com/«org»/«app»-deploy.git
    targetRevision: «sha»
    path: overlays/prod
    plugin:
      name: avp-kustomize
      env:
        - name: AVP_SECRET
          value: <path:secret/data/«app»#token>
  destination:
    server: https://kubernetes.default.svc
    namespace: «app»
  syncPolicy:
    automated: {prune: true, selfHeal: true}
""", app=app(), org=org(), sha=sha1hex())
    add("argocd-application-avp-placeholder", "none", "yaml", "apps/%s.yaml" % app(), text)


# ================================================================= Vault / Consul / SOPS / age / signing keys
def vault_policy_none():
    text = T("""
# «app»-read policy
path "secret/data/«app»/*" {
  capabilities = ["read", "list"]
}

path "database/creds/«app»-ro" {
  capabilities = ["read"]
}

path "auth/token/renew-self" {
  capabilities = ["update"]
}

# deny everything under sys
path "sys/*" {
  capabilities = ["deny"]
}
""", app=app())
    add("vault-policy-hcl", "none", "hcl", "policies/%s-read.hcl" % app(), text)


def vault_server_none():
    text = T("""
ui            = true
cluster_addr  = "https://vault-0.vault-internal:8201"
api_addr      = "https://vault.«org».internal:8200"
disable_mlock = true

storage "raft" {
  path    = "/vault/data"
  node_id = "vault-0"
}

listener "tcp" {
  address       = "0.0.0.0:8200"
  tls_cert_file = "/vault/tls/tls.crt"
  tls_key_file  = "/vault/tls/tls.key"
}

seal "awskms" {
  region     = "eu-west-1"
  kms_key_id = "«kms»"
}

telemetry {
  prometheus_retention_time = "30s"
  disable_hostname          = true
}
""", org=org(), kms=guid())
    add("vault-server-hcl-kms-id", "none", "hcl", "vault/config.hcl", text)


def vault_agent_secret():
    tok = vault_tok()
    text = T("""
# vault-agent.hcl (dev box)
vault {
  address = "https://vault.«org».internal:8200"
}

auto_auth {
  method "token_file" {
    config = {
      token_file_path = "/home/«u»/.vault-token"
    }
  }
}

template {
  source      = "/etc/«app»/config.ctmpl"
  destination = "/etc/«app»/config.json"
}

# temporary until approle is set up
env "VAULT_TOKEN" = "«tok»"
""", org=org(), u=pick("ops", "deploy"), app=app(), tok=tok)
    add("vault-token-hcl", "secret", "hcl", "vault/agent.hcl", text, tok)


def terraform_vault_secret():
    tok = vault_tok()
    text = T("""
provider "vault" {
  address = "https://vault.«org».io"
  token   = "«tok»"
}

data "vault_kv_secret_v2" "db" {
  mount = "secret"
  name  = "«app»/db"
}
""", org=org(), tok=tok, app=app())
    add("terraform-vault-provider-token", "secret", "tf", "infra/providers.tf", text, tok)


def consul_secret():
    kind = R.randrange(2)
    if kind == 0:
        sec = b64(32)
        line = 'encrypt = "%s"' % sec
        extra = 'acl {\n  enabled = true\n  default_policy = "deny"\n  tokens {\n    agent = "${CONSUL_AGENT_TOKEN}"\n  }\n}'
    else:
        sec = guid()
        line = '# gossip key is rendered by consul-template\nencrypt_verify_incoming = true'
        extra = 'acl {\n  enabled = true\n  default_policy = "deny"\n  tokens {\n    initial_management = "%s"\n  }\n}' % sec
    text = T("""
datacenter = "«dc»"
data_dir   = "/opt/consul"
server     = true
bootstrap_expect = 3
retry_join = ["provider=aws tag_key=consul tag_value=«dc»"]
«line»

«extra»

tls {
  defaults {
    ca_file   = "/etc/consul.d/consul-agent-ca.pem"
    cert_file = "/etc/consul.d/«dc»-server-consul-0.pem"
    key_file  = "/etc/consul.d/«dc»-server-consul-0-key.pem"
  }
}
""", dc=pick("dc1", "eu-west", "fra1"), line=line, extra=extra)
    add("consul-hcl-gossip-or-acl", "secret", "hcl", "consul/server.hcl", text, sec)


def consul_none():
    text = T("""
service {
  name = "«app»"
  id   = "«app»-«n»"
  port = 8080
  tags = ["v«n»", "«sha»"]
  token = ""   # set CONSUL_HTTP_TOKEN in the environment

  check {
    id       = "«app»-http"
    http     = "http://localhost:8080/healthz"
    interval = "10s"
  }

  connect {
    sidecar_service {}
  }
}
""", app=app(), n=R.randrange(1, 9), sha=hexs(12))
    add("consul-service-definition", "none", "hcl", "consul.d/%s.hcl" % app(), text)


def sops_yaml_none():
    recip = age_public()
    keys = ["password", "api_token", "smtp_password", "webhook_url"]
    body = "\n".join("%s: %s" % (k, sops_enc()) for k in keys)
    text = T("""
«body»
replicas: «enc_int»
sops:
    kms: []
    gcp_kms: []
    azure_kv: []
    hc_vault: []
    age:
        - recipient: «recip»
          enc: |
            «armor»
    lastmodified: "2025-0«mo»-1«d»T09:12:44Z"
    mac: «mac»
    pgp: []
    unencrypted_suffix: _unencrypted
    version: 3.8.1
""", body=body, enc_int=sops_enc(4, "int"), recip=recip, armor=age_armor().replace("\n", "\n            "),
        mo=R.randrange(1, 9), d=R.randrange(0, 9), mac=sops_enc(44))
    add("sops-yaml-encrypted", "none", "yaml", pick("secrets/prod.enc.yaml", "clusters/prod/secrets.sops.yaml"), text)


def sops_json_none():
    d = {"db": {"user": sops_enc(8), "password": sops_enc(24)}, "stripe_key": sops_enc(40),
         "sops": {"kms": [{"arn": "arn:aws:kms:eu-west-1:%s:key/%s" % (digits(12), guid()), "created_at": "2025-02-11T10:01:22Z",
                           "enc": b64(180), "aws_profile": ""}],
                  "lastmodified": "2025-02-11T10:01:23Z", "mac": sops_enc(44), "version": "3.9.0"}}
    add("sops-json-kms", "none", "json", "config/secrets.enc.json", json.dumps(d, indent=2) + "\n")


def sops_config_none():
    text = T("""
creation_rules:
  - path_regex: secrets/prod/.*\\.yaml$
    age: >-
      «a1»,
      «a2»
  - path_regex: secrets/dev/.*
    pgp: «fp»
    encrypted_regex: ^(data|stringData|password|token)$
""", a1=age_public(), a2=age_public(), fp=pgp_fpr())
    add("sops-creation-rules", "none", "yaml", ".sops.yaml", text)


def ansible_vault_none():
    text = T("""
---
«app»_db_user: «u»
«app»_db_password: !vault |
          «v»
«app»_port: 5432
""", app=app(), u=user(), v=ansible_vault().replace("\n", "\n          "))
    add("ansible-vault-inline", "none", "yml", "group_vars/%s/vault.yml" % pick("prod", "db"), text)


def age_keys_secret():
    sk = age_secret()
    pk = age_public()
    text = "# created: 2025-0%d-%02dT1%d:0%d:22+01:00\n# public key: %s\n%s\n" % (R.randrange(1, 9), R.randrange(1, 28), R.randrange(0, 9), R.randrange(0, 9), pk, sk)
    add("age-identity-file", "secret", "txt", pick("keys.txt", ".config/sops/age/keys.txt", "ci/age.key"), text, sk)


def age_recipients_none():
    text = "# team recipients, one per line\n" + "\n".join("%s  # %s" % (age_public(), n) for n in ["mara", "jonas", "ci", "backup-offline"]) + "\n" + ssh_ed25519_pub() + " kim@work\n"
    add("age-recipients-public", "none", "txt", pick(".age-recipients", "secrets/recipients.txt"), text)


def age_encrypted_none():
    add("age-armored-ciphertext", "none", "age", "secrets/%s.env.age" % app(), age_armor() + "\n")


def minisign_pub_none():
    kid = hexs(16).upper()
    text = "untrusted comment: minisign public key %s\n%s\n" % (kid, base64.b64encode(b"Ed" + _rb(40)).decode())
    add("minisign-public-key", "none", "pub", pick("minisign.pub", "keys/release.pub"), text)


def minisign_sec_secret():
    body = base64.b64encode(b"Ed" + b"\x00\x00" + b"B2" + _rb(152)).decode()
    text = "untrusted comment: minisign secret key\n%s\n" % body
    add("minisign-secret-key", "secret", "key", pick("minisign.key", ".minisign/minisign.key"), text, body)


def signify_pub_none():
    text = "untrusted comment: %s public key\n%s\n" % (pick("openbsd 7.5 base", "release", "%s signify" % app()), base64.b64encode(b"Ed" + _rb(40)).decode())
    add("signify-public-key", "none", "pub", "keys/%s-release.pub" % app(), text)


def signify_sig_none():
    text = "untrusted comment: verify with %s.pub\n%s\nSHA256 (%s-1.%d.0.tar.gz) = %s\nSHA256 (%s-1.%d.0.tar.gz.asc) = %s\n" % (
        app(), base64.b64encode(b"Ed" + _rb(72)).decode(), app(), R.randrange(0, 9), sha256hex(), app(), R.randrange(0, 9), sha256hex())
    add("signify-signed-checksums", "none", "sig", "SHA256.sig", text)


def gpg_public_none():
    fp = pgp_fpr()
    text = "pub   ed25519 2023-0%d-1%d [SC]\n      %s\nuid           %s <release@%s.org>\n\n%s\n" % (
        R.randrange(1, 9), R.randrange(0, 9), fp, app().capitalize() + " Release Signing", org(), pgp_block(False))
    add("gpg-public-key-block", "none", "asc", pick("KEYS", "keys/release.asc", "docs/signing-key.asc"), text)


def gpg_private_secret():
    blk = pgp_block(True)
    text = blk + "\n"
    body_line = blk
    add("gpg-private-key-block", "secret", "asc", pick("ci/signing-key.asc", "private.gpg.asc", ".github/release-private.asc"), text, body_line)


def gpg_sig_none():
    body = base64.b64encode(bytes.fromhex("885e0400") + _rb(90)).decode()
    text = "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n%s  %s-%d.%d.tar.xz\n%s  %s-%d.%d.tar.xz.sbom\n-----BEGIN PGP SIGNATURE-----\n\n%s\n=%s\n-----END PGP SIGNATURE-----\n" % (
        sha256hex(), app(), R.randrange(1, 5), R.randrange(0, 20), sha256hex(), app(), R.randrange(1, 5), R.randrange(0, 20), wrap(body), base64.b64encode(_rb(3)).decode())
    add("gpg-clearsigned-checksums", "none", "asc", "SHA256SUMS.asc", text)


# ================================================================= SSH / PEM / JWKS
def known_hosts_none():
    lines = []
    for h in ["github.com", "gitlab.%s.internal" % org(), "10.0.%d.%d" % (R.randrange(0, 9), R.randrange(2, 250)), "bastion.%s.net" % org()]:
        lines.append("%s %s" % (h, pick(ssh_ed25519_pub, ssh_ecdsa_pub, ssh_rsa_pub)()))
    lines.append("|1|%s|%s %s" % (b64(20), b64(20), ssh_ed25519_pub()))
    lines.append("@cert-authority *.%s.internal %s" % (org(), ssh_ed25519_pub()))
    add("ssh-known-hosts", "none", "txt", pick("ssh/known_hosts", ".ssh/known_hosts", "ansible/files/known_hosts"), "\n".join(lines) + "\n")


def authorized_keys_none():
    lines = ["# managed by ansible, do not edit",
             'command="/usr/local/bin/backup-only",no-pty,no-port-forwarding %s backup@%s' % (ssh_ed25519_pub(), pick("nas", "vault")),
             "%s %s@laptop" % (ssh_rsa_pub(), pick("mara", "jonas")),
             "%s ci-deploy" % ssh_ed25519_pub(),
             "sk-ssh-ed25519@openssh.com %s kim@yubikey" % base64.b64encode(b"\x00\x00\x00\x1ask-ssh-ed25519@openssh.com\x00\x00\x00\x20" + _rb(32) + b"\x00\x00\x00\x04ssh:").decode()]
    add("ssh-authorized-keys", "none", "txt", pick("roles/users/files/authorized_keys", ".ssh/authorized_keys"), "\n".join(lines) + "\n")


def ssh_config_none():
    text = T("""
Host bastion
    HostName bastion.«org».net
    User «u»
    IdentityFile ~/.ssh/id_ed25519_«org»
    IdentitiesOnly yes
    # host key fingerprint «fp»

Host 10.20.*
    ProxyJump bastion
    User ubuntu
    IdentityFile ~/.ssh/«org»-prod.pem
    StrictHostKeyChecking yes

Host *
    AddKeysToAgent yes
    UseKeychain yes
    ServerAliveInterval 60
""", org=org(), u=user(), fp=ssh_fp())
    add("ssh-config-identityfile", "none", "config", ".ssh/config", text)


def ssh_private_secret():
    k = openssh_private()
    add("openssh-private-key", "secret", "key", pick(".ssh/id_ed25519", "deploy/keys/deploy_key", "ansible/files/id_ed25519"), k + "\n", k)


def ssh_pub_and_fingerprint_none():
    pub = ssh_ed25519_pub()
    text = "%s deploy@%s\n# fingerprint: 256 %s deploy@%s (ED25519)\n# randomart omitted\n" % (pub, app(), ssh_fp(), app())
    add("ssh-public-key-file", "none", "pub", pick("deploy/keys/deploy_key.pub", "id_ed25519.pub"), text)


def pem_cert_none():
    c1 = certificate()
    c2 = certificate()
    text = "subject=CN = %s.%s.io\nissuer=C = US, O = Let's Encrypt, CN = R11\nSHA256 Fingerprint=%s\n%s\n%s\n" % (
        app(), org(), ":".join(hexs(64).upper()[i:i + 2] for i in range(0, 64, 2)), c1, c2)
    add("pem-certificate-chain", "none", "pem", pick("certs/fullchain.pem", "nginx/ssl/%s.crt" % app()), text)


def pem_csr_none():
    text = csr() + "\n"
    add("pem-csr", "none", "csr", "certs/%s.%s.io.csr" % (app(), org()), text)


def pem_ca_bundle_none():
    text = "# %s internal CA\n%s\n# root\n%s\n" % (org(), certificate(), certificate())
    add("pem-ca-bundle", "none", "crt", pick("config/ca-bundle.crt", "docker/certs/internal-ca.crt"), text)


def pem_private_secret():
    f = pick(rsa_private, pkcs8_private, ec_private, ed_private)
    k = f()
    body = k
    extra = pick("", "# issued for %s.%s.io\n" % (app(), org()))
    add("pem-private-key", "secret", "pem", pick("certs/server.key", "config/jwt/private.pem", "ssl/%s.key" % app()), extra + k + "\n", body)


def pem_private_in_config_secret():
    k = pick(ec_private, ed_private, rsa_private)()
    body = k.split("\n")[1]
    body = body[-40:]
    text = "tls:\n  cert_file: /etc/%s/tls.crt\n  key: |\n    %s\n  min_version: \"1.2\"\n" % (app(), k.replace("\n", "\n    "))
    add("pem-private-key-in-yaml", "secret", "yaml", "config/%s.yaml" % app(), text, body)


def jwks_public_none():
    keys = []
    for _ in range(2):
        keys.append({"kty": "RSA", "use": "sig", "alg": "RS256", "kid": b64url(16), "n": b64url(256), "e": "AQAB"})
    keys.append({"kty": "EC", "use": "sig", "crv": "P-256", "kid": hexs(16), "x": b64url(32), "y": b64url(32), "alg": "ES256"})
    add("jwks-public", "none", "json", pick("public/.well-known/jwks.json", "config/jwks.json"), json.dumps({"keys": keys}, indent=2) + "\n")


def jwk_private_secret():
    d = b64url(32)
    k = {"kty": "EC", "crv": "P-256", "kid": hexs(16), "use": "sig", "x": b64url(32), "y": b64url(32), "d": d}
    add("jwk-private-ec", "secret", "json", pick("config/signing-key.jwk", "keys/jwt-private.json"), json.dumps(k, indent=2) + "\n", d)


def jwk_okp_private_secret():
    d = b64url(32)
    doc = {"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "2025-0%d" % R.randrange(1, 9), "x": b64url(32), "d": d}]}
    add("jwks-private-okp", "secret", "json", "secrets/jwks.json", json.dumps(doc) + "\n", d)


# ================================================================= VPN / overlay networks
def wireguard_secret():
    k = wg_key()
    text = T("""
[Interface]
Address = 10.«a».0.«b»/24
ListenPort = 51820
PrivateKey = «k»
DNS = 10.«a».0.1

[Peer]
# «peer»
PublicKey = «pk»
AllowedIPs = 10.«a».0.0/24, 192.168.«c».0/24
Endpoint = vpn.«org».net:51820
PersistentKeepalive = 25
""", a=R.randrange(8, 250), b=R.randrange(2, 250), k=k, peer=pick("home router", "office gw", "hetzner"), pk=wg_key(), c=R.randrange(0, 250), org=org())
    add("wireguard-private-key", "secret", "conf", pick("wg0.conf", "wireguard/wg0.conf", "ansible/files/wg-client.conf"), text, k)


def wireguard_psk_secret():
    psk = wg_key()
    text = T("""
[Interface]
Address = 10.«a».0.1/24
ListenPort = 51820
PostUp = wg set %i private-key /etc/wireguard/%i.key
PostUp = iptables -A FORWARD -i %i -j ACCEPT

[Peer]
PublicKey = «pk»
PresharedKey = «psk»
AllowedIPs = 10.«a».0.2/32
""", a=R.randrange(8, 250), pk=wg_key(), psk=psk)
    add("wireguard-preshared-key", "secret", "conf", "wireguard/wg0.conf", text, psk)


def wireguard_none():
    peers = "\n".join("[Peer]\n# %s\nPublicKey = %s\nAllowedIPs = 10.9.0.%d/32\n" % (n, wg_key(), i + 2) for i, n in enumerate(["laptop", "phone", "nas"]))
    text = T("""
[Interface]
Address = 10.9.0.1/24
ListenPort = 51820
PostUp = wg set %i private-key /run/secrets/wg_private_key
SaveConfig = false

«peers»""", peers=peers)
    add("wireguard-public-peers", "none", "conf", pick("wireguard/wg0.conf", "templates/wg0.conf"), text)


def wireguard_template_none():
    text = """[Interface]
Address = {{ wg_address }}
PrivateKey = {{ wg_private_key }}
ListenPort = {{ wg_port | default(51820) }}

{% for peer in wg_peers %}
[Peer]
PublicKey = {{ peer.public_key }}
PresharedKey = {{ lookup('community.hashi_vault.hashi_vault', 'secret=kv/data/wg/' ~ peer.name ~ ':psk') }}
AllowedIPs = {{ peer.allowed_ips | join(', ') }}
{% endfor %}
"""
    add("wireguard-jinja-template", "none", "j2", "roles/wireguard/templates/wg0.conf.j2", text)


def openvpn_secret():
    key = "\n".join(hexs(32) for _ in range(16))
    text = T("""
client
dev tun
proto udp
remote vpn.«org».com 1194
resolv-retry infinite
nobind
persist-key
persist-tun
remote-cert-tls server
cipher AES-256-GCM
auth SHA256
key-direction 1
verb 3
auth-user-pass

<ca>
«ca»
</ca>
<tls-auth>
#
# 2048 bit OpenVPN static key
#
-----BEGIN OpenVPN Static key V1-----
«key»
-----END OpenVPN Static key V1-----
</tls-auth>
""", org=org(), ca=certificate(), key=key)
    add("openvpn-tls-auth-static-key", "secret", "ovpn", pick("client.ovpn", "vpn/%s.ovpn" % org()), text, key.split("\n")[0])


def openvpn_none():
    text = T("""
client
dev tun
proto udp
remote «org»-vpn.example.net 1194
nobind
persist-key
persist-tun
remote-cert-tls server
verify-x509-name vpn.«org».net name
auth-user-pass /etc/openvpn/«org».auth
tls-crypt /etc/openvpn/tls-crypt.key
cipher AES-256-GCM
# peer fingerprint pinning
peer-fingerprint «fp»
<ca>
«ca»
</ca>
""", org=org(), fp=":".join(hexs(64).upper()[i:i + 2] for i in range(0, 64, 2)), ca=certificate())
    add("openvpn-ca-and-fingerprint", "none", "ovpn", "vpn/client.ovpn", text)


def tailscale_secret():
    k = tailscale()
    kind = R.randrange(2)
    if kind == 0:
        text = T("""
services:
  tailscale:
    image: tailscale/tailscale:latest
    hostname: «app»
    environment:
      - TS_AUTHKEY=«k»
      - TS_STATE_DIR=/var/lib/tailscale
      - TS_EXTRA_ARGS=--advertise-tags=tag:container
    volumes:
      - ts-state:/var/lib/tailscale
    cap_add: [net_admin, sys_module]
  «app»:
    image: ghcr.io/«org»/«app»:latest
    network_mode: service:tailscale
volumes:
  ts-state: {}
""", app=app(), k=k, org=org())
        add("tailscale-authkey-compose", "secret", "yml", "docker-compose.yml", text, k)
    else:
        text = "#!/bin/sh\nset -e\ncurl -fsSL https://tailscale.com/install.sh | sh\ntailscale up --authkey=%s --ssh --advertise-routes=192.168.%d.0/24\n" % (k, R.randrange(0, 250))
        add("tailscale-authkey-script", "secret", "sh", "scripts/bootstrap-node.sh", text, k)


def tailscale_none():
    text = T("""
{
  "tagOwners": {"tag:ci": ["autogroup:admin"], "tag:server": ["group:ops"]},
  "groups": {"group:ops": ["mara@«org».com", "jonas@«org».com"]},
  "acls": [
    {"action": "accept", "src": ["group:ops"], "dst": ["tag:server:22,443"]},
    {"action": "accept", "src": ["tag:ci"], "dst": ["tag:server:443"]}
  ],
  "nodeAttrs": [{"target": ["tag:server"], "attr": ["funnel"]}],
  "tests": [{"src": "mara@«org».com", "accept": ["tag:server:22"]}],
  // node keys are public: nodekey:«nk»
  "derpMap": {"OmitDefaultRegions": false}
}
""", org=org(), nk=hexs(64))
    add("tailscale-acl-hujson", "none", "hujson", "tailscale/policy.hujson", text)


def zerotier_secret():
    addr = hexs(10)
    sec = "%s:0:%s:%s" % (addr, hexs(128), hexs(128))
    add("zerotier-identity-secret", "secret", "secret", "zerotier-one/identity.secret", sec + "\n", sec)


def zerotier_none():
    addr = hexs(10)
    text = T("""
# join the lab network
ZT_NETWORK=«nw»
ZT_NODE=«addr»
zerotier-cli join $ZT_NETWORK
zerotier-cli set $ZT_NETWORK allowManaged=1
# identity.public for reference (public half only)
# «pub»
""", nw=hexs(16), addr=addr, pub="%s:0:%s" % (addr, hexs(128)))
    add("zerotier-network-and-public-identity", "none", "sh", "scripts/zerotier-join.sh", text)


# ================================================================= systemd / cron
def systemd_env_secret():
    kind = R.randrange(2)
    p = pw(safe=True) if kind == 0 else pick(stripe_sk, sendgrid, dd_key)()
    line = 'Environment="DATABASE_URL=postgres://%s:%s@%s:5432/%s"' % (user(), p, host(), app()) if kind == 0 else "Environment=%s=%s" % (pick("API_KEY", "SERVICE_TOKEN", "DD_API_KEY"), p)
    text = T("""
[Unit]
Description=«App» API
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
User=«app»
WorkingDirectory=/opt/«app»
«line»
Environment=RUST_LOG=info
ExecStart=/opt/«app»/bin/«app»-server --port 8080
Restart=on-failure
RestartSec=5

[Install]
WantedBy=multi-user.target
""", App=app().capitalize(), app=app(), line=line)
    add("systemd-unit-environment-secret", "secret", "service", "deploy/systemd/%s.service" % app(), text, p)


def systemd_none():
    text = T("""
[Unit]
Description=«App» worker
After=network-online.target postgresql.service

[Service]
User=«app»
EnvironmentFile=/etc/«app»/env
LoadCredential=db-password:/etc/credstore/«app»-db-password
LoadCredentialEncrypted=api-token:/etc/credstore.encrypted/«app»-api-token
Environment=DB_PASSWORD_FILE=%d/db-password
Environment=API_TOKEN_FILE=%d/api-token
ExecStart=/usr/local/bin/«app» worker
DynamicUser=yes
ProtectSystem=strict
NoNewPrivileges=yes

[Install]
WantedBy=multi-user.target
""", App=app().capitalize(), app=app())
    add("systemd-load-credential", "none", "service", "%s-worker.service" % app(), text)


def systemd_envfile_secret():
    tok = pick(telegram, discord_hook, slack_hook, mailgun)()
    text = T("""
# /etc/«app»/env — read by «app».service via EnvironmentFile=
LISTEN_ADDR=0.0.0.0:9000
LOG_FORMAT=json
NOTIFY_«K»=«tok»
""", app=app(), K=pick("TOKEN", "URL", "KEY"), tok=tok)
    add("systemd-environment-file", "secret", "env", "etc/%s/env" % app(), text, tok)


def systemd_creds_none():
    blob = base64.b64encode(b"c\xce\x9a\xa6" + _rb(R.randrange(200, 320))).decode()
    text = "# systemd-creds encrypt --name=db-password - - | base64\nSetCredentialEncrypted=db-password: \\\n        %s\n" % " \\\n        ".join(blob[i:i + 64] for i in range(0, len(blob), 64))
    add("systemd-set-credential-encrypted", "none", "conf", "etc/systemd/system/%s.service.d/creds.conf" % app(), text)


def crontab_secret():
    tok = pick(lambda: pw(safe=True), ghp, slack_hook)()
    if tok.startswith("https://"):
        job = "*/15 * * * * /usr/local/bin/check_disk.sh || curl -s -X POST -H 'Content-type: application/json' --data '{\"text\":\"disk alert on '$(hostname)'\"}' %s" % tok
    elif tok.startswith("ghp_"):
        job = "0 3 * * * cd /srv/mirror && git -c http.extraHeader='Authorization: token %s' fetch --all --prune >> /var/log/mirror.log 2>&1" % tok
    else:
        job = "30 2 * * * mysqldump -u backup -p'%s' --single-transaction %s | gzip > /backups/%s-$(date +\\%%F).sql.gz" % (tok, app(), app())
    text = "# m h  dom mon dow   command\nSHELL=/bin/bash\nMAILTO=ops@%s.com\n0 * * * * /usr/sbin/logrotate /etc/logrotate.conf\n%s\n" % (org(), job)
    add("crontab-inline-credential", "secret", "crontab", pick("crontab", "ops/cron/root.crontab"), text, tok)


def crontab_none():
    text = T("""
SHELL=/bin/bash
PATH=/usr/local/bin:/usr/bin:/bin
# credentials for these jobs live in /root/.my.cnf and /etc/restic/env
15 3 * * * . /etc/restic/env && restic backup /srv --tag nightly
45 3 * * 0 mysqldump --defaults-extra-file=/root/.my.cnf --all-databases | gzip > /backups/all-$(date +\\%F).sql.gz
*/5 * * * * curl -fsS -m 10 --retry 5 -o /dev/null https://hc-ping.com/$HC_PING_UUID
0 6 * * 1 /usr/local/bin/certbot renew --quiet --deploy-hook "systemctl reload nginx"
""")
    add("crontab-env-refs", "none", "crontab", "ops/cron/backup.crontab", text)


# ================================================================= web servers
def htpasswd_none():
    lines = ["%s:%s" % (n, pick(apr1, bcrypt, sha512crypt)()) for n in ["admin", "mara", "grafana", "metrics"]]
    lines.append("legacy:{SHA}%s" % b64(20))
    add("htpasswd-hashes", "none", "htpasswd", pick(".htpasswd", "nginx/htpasswd", "deploy/auth/htpasswd"), "\n".join(lines) + "\n")


def nginx_basic_header_secret():
    creds = "%s:%s" % (user(), pw(safe=True))
    b = base64.b64encode(creds.encode()).decode()
    text = T("""
upstream legacy_api {
    server 10.0.«a».«b»:8080;
    keepalive 16;
}

server {
    listen 443 ssl http2;
    server_name api.«org».com;

    ssl_certificate     /etc/letsencrypt/live/api.«org».com/fullchain.pem;
    ssl_certificate_key /etc/letsencrypt/live/api.«org».com/privkey.pem;

    location /legacy/ {
        proxy_pass http://legacy_api/;
        proxy_set_header Host $host;
        proxy_set_header X-Real-IP $remote_addr;
        proxy_set_header Authorization "Basic «b64»";
    }
}
""", a=R.randrange(0, 9), b=R.randrange(2, 250), org=org(), b64=b)
    add("nginx-proxy-basic-auth-header", "secret", "conf", "nginx/sites-available/api.conf", text, b)


def nginx_none():
    text = T("""
server {
    listen 443 ssl;
    server_name grafana.«org».io;
    ssl_certificate     /etc/nginx/ssl/grafana.crt;
    ssl_certificate_key /etc/nginx/ssl/grafana.key;
    ssl_stapling on;
    ssl_trusted_certificate /etc/nginx/ssl/chain.pem;
    add_header Strict-Transport-Security "max-age=63072000" always;
    add_header Content-Security-Policy "script-src 'self' 'sha256-«csp»'" always;
    add_header Public-Key-Pins 'pin-sha256="«pin»"; max-age=5184000';

    location / {
        auth_basic           "restricted";
        auth_basic_user_file /etc/nginx/.htpasswd;
        proxy_pass           http://127.0.0.1:3000;
        proxy_set_header     Authorization $http_authorization;
        proxy_set_header     X-WEBAUTH-USER $remote_user;
    }
}
""", org=org(), csp=b64(32), pin=b64(32))
    add("nginx-auth-basic-file", "none", "conf", "nginx/conf.d/grafana.conf", text)


def caddy_none():
    text = T("""
{
	email ops@«org».com
}

metrics.«org».io {
	basicauth /* {
		«u» «h»
		prometheus «h2»
	}
	reverse_proxy localhost:9090
}

«app».«org».io {
	encode zstd gzip
	reverse_proxy {$UPSTREAM:localhost:8080}
	header Authorization "Bearer {env.UPSTREAM_TOKEN}"
}
""", org=org(), u=user(), h=bcrypt(14), h2=bcrypt(14), app=app())
    add("caddyfile-bcrypt-basicauth", "none", "caddyfile", "Caddyfile", text)


def caddy_secret():
    tok = pick(grafana_sa, dd_key, newrelic)()
    text = T("""
grafana.«org».io {
	reverse_proxy localhost:3000 {
		header_up Authorization "Bearer «tok»"
	}
}
""", org=org(), tok=tok)
    add("caddyfile-header-token", "secret", "caddyfile", pick("Caddyfile", "caddy/Caddyfile"), text, tok)


def traefik_none():
    text = T("""
http:
  middlewares:
    dashboard-auth:
      basicAuth:
        users:
          - "«u1»:«h1»"
          - "«u2»:«h2»"
    secure-headers:
      headers:
        stsSeconds: 31536000
  routers:
    dashboard:
      rule: Host(`traefik.«org».lan`)
      service: api@internal
      middlewares: [dashboard-auth]
      tls:
        certResolver: letsencrypt
certificatesResolvers:
  letsencrypt:
    acme:
      email: admin@«org».lan
      dnsChallenge:
        provider: cloudflare   # CF_DNS_API_TOKEN comes from the environment
""", u1="admin", h1=apr1(), u2=user(), h2=apr1(), org=org())
    add("traefik-basicauth-apr1", "none", "yml", "traefik/dynamic/dashboard.yml", text)


def traefik_secret():
    tok = rs(40, ALNUM + "_-")
    text = T("""
services:
  traefik:
    image: traefik:v3.0
    command:
      - --providers.docker=true
      - --certificatesresolvers.le.acme.dnschallenge.provider=cloudflare
      - --certificatesresolvers.le.acme.email=ops@«org».dev
    environment:
      CF_DNS_API_TOKEN: «tok»
    ports: ["80:80", "443:443"]
    volumes:
      - /var/run/docker.sock:/var/run/docker.sock:ro
""", org=org(), tok=tok)
    add("traefik-cloudflare-dns-token", "secret", "yml", "traefik/docker-compose.yml", text, tok)


def haproxy_secret():
    p = pw(safe=True)
    text = T("""
global
    log /dev/log local0
    maxconn 4096

userlist stats_users
    user «u» insecure-password «p»
    user viewer password «h»

frontend stats
    bind *:8404
    stats enable
    stats uri /stats
    acl auth_ok http_auth(stats_users)
    http-request auth realm haproxy unless auth_ok

backend app
    balance roundrobin
    server app1 10.0.1.11:8080 check
    server app2 10.0.1.12:8080 check
""", u=pick("admin", "ops"), p=p, h=sha512crypt())
    add("haproxy-insecure-password", "secret", "cfg", "haproxy/haproxy.cfg", text, p)


def haproxy_none():
    text = T("""
userlist admins
    group ops users «u1»,«u2»
    user «u1» password «h1»
    user «u2» password «h2»

listen stats
    bind :8404 ssl crt /etc/haproxy/certs/stats.pem
    stats enable
    stats uri /
    stats auth ${STATS_USER}:${STATS_PASSWORD}
""", u1=pick("mara", "kim"), u2=pick("jonas", "lee"), h1=sha512crypt(), h2=pick(sha512crypt, yescrypt)())
    add("haproxy-userlist-hashes", "none", "cfg", "haproxy.cfg", text)


# ================================================================= monitoring
def prometheus_secret():
    kind = R.randrange(2)
    sec = pw(safe=True) if kind == 0 else pick(grafana_sa, glrt, lambda: b64url(48))()
    auth = ("    basic_auth:\n      username: prometheus\n      password: %s\n" % sec) if kind == 0 else ("    authorization:\n      type: Bearer\n      credentials: %s\n" % sec)
    text = T("""
global:
  scrape_interval: 30s
  evaluation_interval: 30s

rule_files:
  - /etc/prometheus/rules/*.yml

scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['10.0.0.11:9100', '10.0.0.12:9100']

  - job_name: «job»
    scheme: https
    metrics_path: /metrics
«auth»    static_configs:
      - targets: ['«tgt»']
""", job=pick("federate", "gitlab", "app"), auth=auth, tgt=pick("gitlab.%s.com" % org(), "app.%s.io" % org()))
    add("prometheus-scrape-credential", "secret", "yml", "prometheus/prometheus.yml", text, sec)


def prometheus_none():
    text = T("""
scrape_configs:
  - job_name: blackbox
    basic_auth:
      username: prom
      password_file: /etc/prometheus/secrets/blackbox
    static_configs:
      - targets: [https://«org».io]
  - job_name: kubernetes-pods
    authorization:
      credentials_file: /var/run/secrets/kubernetes.io/serviceaccount/token
    tls_config:
      ca_file: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt
remote_write:
  - url: https://prometheus-prod-«n»-prod-eu-west-2.grafana.net/api/prom/push
    basic_auth:
      username: «id»
      password: ${GRAFANA_CLOUD_API_KEY}
""", org=org(), n=R.randrange(10, 40), id=digits(7))
    add("prometheus-credentials-file", "none", "yml", "prometheus/prometheus.yml", text)


def alertmanager_secret():
    h = pick(slack_hook, discord_hook)()
    pdkey = None
    text = T("""
global:
  resolve_timeout: 5m
route:
  receiver: team-«t»
  group_by: [alertname, cluster]
  routes:
    - matchers: [severity="critical"]
      receiver: pager
receivers:
  - name: team-«t»
    «kind»:
      - «field»: «h»
        send_resolved: true
  - name: pager
    pagerduty_configs:
      - routing_key_file: /etc/alertmanager/pd-routing-key
""", t=pick("infra", "payments", "data"), kind="slack_configs" if "slack" in h else "webhook_configs",
        field="api_url" if "slack" in h else "url", h=h)
    add("alertmanager-webhook-url", "secret", "yml", "alertmanager/alertmanager.yml", text, h)


def alertmanager_pagerduty_secret():
    k = hexs(32)
    text = T("""
receivers:
  - name: oncall
    pagerduty_configs:
      - routing_key: «k»
        severity: '{{ .CommonLabels.severity }}'
        description: '{{ template "pagerduty.default.description" . }}'
route:
  receiver: oncall
""", k=k)
    add("alertmanager-pagerduty-routing-key", "secret", "yml", "monitoring/alertmanager.yml", text, k)


def alertmanager_none():
    text = T("""
global:
  slack_api_url_file: /etc/alertmanager/secrets/slack-url
  smtp_smarthost: smtp.«org».com:587
  smtp_auth_username: alerts@«org».com
  smtp_auth_password_file: /etc/alertmanager/secrets/smtp
templates: ['/etc/alertmanager/templates/*.tmpl']
route:
  receiver: default
receivers:
  - name: default
    slack_configs:
      - channel: '#alerts'
        title: '{{ template "slack.title" . }}'
    webhook_configs:
      - url: http://alertmanager-bot:8080/webhooks/«id»/alerts
        http_config:
          authorization:
            credentials_file: /etc/alertmanager/secrets/bot-token
""", org=org(), id=pick("infra", "payments", "platform"))
    add("alertmanager-secret-files", "none", "yml", "alertmanager.yml", text)


def grafana_ini_secret():
    p = pw()
    text = T("""
[server]
protocol = http
http_port = 3000
domain = grafana.«org».io
root_url = %(protocol)s://%(domain)s/

[database]
type = postgres
host = «h»:5432
name = grafana
user = grafana
password = $__env{GF_DATABASE_PASSWORD}

[security]
admin_user = admin
admin_password = «p»
cookie_secure = true

[auth.anonymous]
enabled = false
""", org=org(), h=host(), p=p)
    add("grafana-ini-admin-password", "secret", "ini", "grafana/grafana.ini", text, p)


def grafana_datasource_none():
    text = T("""
apiVersion: 1
datasources:
  - name: Prometheus
    type: prometheus
    uid: «uid»
    url: http://prometheus:9090
    isDefault: true
  - name: Loki
    type: loki
    uid: «uid2»
    url: https://logs-prod-eu-west-0.grafana.net
    basicAuth: true
    basicAuthUser: «id»
    secureJsonData:
      basicAuthPassword: $__file{/etc/secrets/loki_token}
  - name: Postgres
    type: postgres
    url: «h»:5432
    user: grafana_ro
    secureJsonData:
      password: ${GF_PG_PASSWORD}
""", uid=rs(9, LOWER + DIGITS), uid2=rs(14, LOWER + DIGITS), id=digits(6), h=host())
    add("grafana-provisioning-refs", "none", "yaml", "grafana/provisioning/datasources/ds.yaml", text)


def grafana_datasource_secret():
    tok = pick(grafana_sa, lambda: "glc_" + b64(90, pad=False))()
    text = T("""
apiVersion: 1
datasources:
  - name: Mimir
    type: prometheus
    url: https://prometheus-prod-«n».grafana.net/api/prom
    basicAuth: true
    basicAuthUser: «id»
    secureJsonData:
      basicAuthPassword: «tok»
""", n=R.randrange(10, 50), id=digits(6), tok=tok)
    add("grafana-provisioning-cloud-token", "secret", "yaml", "grafana/provisioning/datasources/cloud.yaml", text, tok)


# ================================================================= databases / brokers
def pg_dump_header_none():
    text = T("""
--
-- PostgreSQL database dump
--

-- Dumped from database version 16.«a»
-- Dumped by pg_dump version 16.«a»

SET statement_timeout = 0;
SET lock_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);

CREATE ROLE «u»;
ALTER ROLE «u» WITH NOSUPERUSER INHERIT NOCREATEROLE LOGIN PASSWORD '«scram»';

CREATE TABLE public.api_keys (
    id bigint NOT NULL,
    key_prefix character varying(12) NOT NULL,
    key_hash character(64) NOT NULL
);

COPY public.api_keys (id, key_prefix, key_hash) FROM stdin;
1	«p1»	«h1»
2	«p2»	«h2»
\\.
""", a=R.randrange(1, 4), u=user(), scram=scram(), p1="ak_" + rs(6, LOWER), h1=sha256hex(), p2="ak_" + rs(6, LOWER), h2=sha256hex())
    add("pg-dump-scram-and-key-hashes", "none", "sql", "db/dump/schema.sql", text)


def mysql_dump_secret():
    p = pw(safe=True)
    text = T("""
-- MySQL dump 10.13  Distrib 8.0.«a», for Linux (x86_64)
--
-- Host: «h»    Database: «db»
-- ------------------------------------------------------
/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!50503 SET NAMES utf8mb4 */;

CREATE USER IF NOT EXISTS '«u»'@'%' IDENTIFIED BY '«p»';
GRANT SELECT, INSERT, UPDATE, DELETE ON `«db»`.* TO '«u»'@'%';

DROP TABLE IF EXISTS `settings`;
CREATE TABLE `settings` (
  `k` varchar(64) NOT NULL,
  `v` text,
  PRIMARY KEY (`k`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
""", a=R.randrange(30, 40), h=host(), db=app(), u=user(), p=p)
    add("mysql-dump-create-user", "secret", "sql", "db/seed/%s.sql" % app(), text, p)


def mysql_dump_none():
    text = T("""
-- MySQL dump 10.19  Distrib 10.11.«a»-MariaDB
-- Host: localhost    Database: mysql
LOCK TABLES `user` WRITE;
INSERT INTO `global_priv` VALUES ('localhost','«u»','{\\"access\\":0,\\"plugin\\":\\"mysql_native_password\\",\\"authentication_string\\":\\"«h»\\"}');
INSERT INTO `global_priv` VALUES ('%','repl','{\\"access\\":524288,\\"plugin\\":\\"mysql_native_password\\",\\"authentication_string\\":\\"«h2»\\"}');
UNLOCK TABLES;
""", a=R.randrange(1, 9), u=user(), h=mysql_hash(), h2=mysql_hash())
    add("mysql-dump-native-password-hashes", "none", "sql", "backup/mysql-grants.sql", text)


def redis_conf_secret():
    p = pw(safe=True) if R.random() < 0.5 else hexs(64)
    text = T("""
bind 0.0.0.0
protected-mode yes
port 6379
tcp-keepalive 300
daemonize no
supervised systemd
loglevel notice
databases 16
save 900 1
save 300 10
dir /var/lib/redis
requirepass «p»
maxmemory 2gb
maxmemory-policy allkeys-lru
appendonly yes
""", p=p)
    add("redis-conf-requirepass", "secret", "conf", pick("redis/redis.conf", "config/redis.conf"), text, p)


def redis_acl_none():
    lines = ["user default off", "user %s on #%s ~cache:* +get +set +del" % (app(), sha256hex()),
             "user monitor on #%s +info +ping +client|list" % sha256hex(),
             "user replica on #%s +psync +replconf +ping" % sha256hex()]
    add("redis-acl-file-sha256", "none", "acl", "redis/users.acl", "\n".join(lines) + "\n")


def rabbitmq_secret():
    p = pw(safe=True)
    text = T("""
listeners.tcp.default = 5672
management.tcp.port = 15672
loopback_users.guest = false
default_vhost = /«app»
default_user = «u»
default_pass = «p»
default_permissions.configure = .*
default_permissions.read = .*
default_permissions.write = .*
cluster_formation.peer_discovery_backend = rabbit_peer_discovery_k8s
vm_memory_high_watermark.relative = 0.6
""", app=app(), u=user(), p=p)
    add("rabbitmq-conf-default-pass", "secret", "conf", "rabbitmq/rabbitmq.conf", text, p)


def rabbitmq_defs_none():
    users = [{"name": n, "password_hash": b64(36), "hashing_algorithm": "rabbit_password_hashing_sha256", "tags": t, "limits": {}}
             for n, t in [("admin", ["administrator"]), (app(), []), ("monitoring", ["monitoring"])]]
    d = {"rabbit_version": "3.13.1", "rabbitmq_version": "3.13.1", "product_name": "RabbitMQ", "users": users,
         "vhosts": [{"name": "/"}], "permissions": [{"user": u["name"], "vhost": "/", "configure": ".*", "write": ".*", "read": ".*"} for u in users],
         "parameters": [], "global_parameters": [{"name": "cluster_name", "value": "rabbit@%s" % app()},
                                                 {"name": "internal_cluster_id", "value": "rabbitmq-cluster-id-" + b64url(16)}]}
    add("rabbitmq-definitions-hashes", "none", "json", "rabbitmq/definitions.json", json.dumps(d, indent=2) + "\n")


def kafka_sasl_secret():
    p = pw(safe=True)
    kind = R.randrange(2)
    if kind == 0:
        text = T("""
bootstrap.servers=«b»:9093
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="«u»" password="«p»";
ssl.truststore.location=/etc/kafka/secrets/kafka.truststore.jks
ssl.truststore.password=${file:/etc/kafka/secrets/creds.properties:truststore.password}
acks=all
enable.idempotence=true
""", b=pick("kafka-0.kafka.svc", "b-1.msk.%s.internal" % org()), u=user(), p=p)
        add("kafka-client-sasl-jaas", "secret", "properties", pick("config/client.properties", "kafka/producer.properties"), text, p)
    else:
        text = T("""
KafkaServer {
    org.apache.kafka.common.security.plain.PlainLoginModule required
    username="admin"
    password="«p»"
    user_admin="«p»";
};
Client {
    org.apache.zookeeper.server.auth.DigestLoginModule required
    username="kafka"
    password="${ZK_KAFKA_PASSWORD}";
};
""", p=p)
        add("kafka-server-jaas", "secret", "conf", "kafka/kafka_server_jaas.conf", text, p)


def kafka_none():
    text = T("""
bootstrap.servers=pkc-«x».eu-west-1.aws.confluent.cloud:9092
security.protocol=SASL_SSL
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="${CLUSTER_API_KEY}" password="${CLUSTER_API_SECRET}";
schema.registry.url=https://psrc-«y».eu-central-1.aws.confluent.cloud
basic.auth.credentials.source=USER_INFO
basic.auth.user.info=${SR_API_KEY}:${SR_API_SECRET}
client.id=«app»-«cid»
""", x=rs(5, LOWER + DIGITS), y=rs(5, LOWER + DIGITS), app=app(), cid=guid())
    add("kafka-confluent-env-refs", "none", "properties", "config/ccloud.properties", text)


def mosquitto_none():
    text = "listener 8883\ncafile /mosquitto/certs/ca.crt\ncertfile /mosquitto/certs/server.crt\nkeyfile /mosquitto/certs/server.key\nallow_anonymous false\npassword_file /mosquitto/config/passwd\nacl_file /mosquitto/config/acl\n"
    pw_lines = "\n".join("%s:%s" % (n, mosq_hash()) for n in ["homeassistant", "esp-garage", "zigbee2mqtt", "node-red"])
    add("mosquitto-conf", "none", "conf", "mosquitto/config/mosquitto.conf", text)
    add("mosquitto-passwd-hashes", "none", "passwd", "mosquitto/config/passwd", pw_lines + "\n")


def ldif_secret():
    p = pw()
    text = T("""
dn: cn=«u»,ou=services,dc=«org»,dc=com
objectClass: inetOrgPerson
objectClass: top
cn: «u»
sn: service
uid: «u»
mail: «u»@«org».com
userPassword: «p»
description: bind account for «app»
""", u=user(), org=org(), p=p, app=app())
    add("ldif-plaintext-userpassword", "secret", "ldif", "ldap/bootstrap/10-service-accounts.ldif", text, p)


def ldif_none():
    entries = []
    for n in ["mara", "jonas", "kim"]:
        entries.append("dn: uid=%s,ou=people,dc=%s,dc=org\nobjectClass: posixAccount\nobjectClass: inetOrgPerson\nuid: %s\ncn: %s\nsn: %s\nuidNumber: %d\ngidNumber: 1000\nhomeDirectory: /home/%s\nuserPassword: %s\nsshPublicKey: %s" % (
            n, org(), n, n.capitalize(), n.capitalize(), R.randrange(10000, 20000), n, pick(ssha, lambda: "{CRYPT}" + sha512crypt())(), ssh_ed25519_pub()))
    add("ldif-hashed-passwords", "none", "ldif", "ldap/people.ldif", "\n\n".join(entries) + "\n")


def ldap_conf_secret():
    p = pw()
    text = T("""
# /etc/nslcd.conf
uid nslcd
gid nslcd
uri ldaps://ldap.«org».com/
base dc=«org»,dc=com
binddn cn=nslcd,ou=services,dc=«org»,dc=com
bindpw «p»
tls_reqcert demand
tls_cacertfile /etc/ssl/certs/ca-certificates.crt
""", org=org(), p=p)
    add("nslcd-bindpw", "secret", "conf", "roles/ldap-client/files/nslcd.conf", text, p)


def sssd_none():
    text = T("""
[sssd]
services = nss, pam, ssh
domains = «org».com

[domain/«org».com]
id_provider = ldap
auth_provider = ldap
ldap_uri = ldaps://ldap.«org».com
ldap_search_base = dc=«org»,dc=com
ldap_sasl_mech = GSSAPI
ldap_krb5_keytab = /etc/sssd/sssd.keytab
ldap_tls_cacert = /etc/pki/tls/certs/«org»-ca.pem
# CA fingerprint (SHA-256): «fp»
cache_credentials = true
""", org=org(), fp=":".join(hexs(64).upper()[i:i + 2] for i in range(0, 64, 2)))
    add("sssd-gssapi-keytab", "none", "conf", "roles/sssd/templates/sssd.conf", text)


def krb5_none():
    text = T("""
[libdefaults]
    default_realm = «R»
    dns_lookup_kdc = true
    rdns = false
    ticket_lifetime = 24h
    forwardable = true
    default_ccache_name = KEYRING:persistent:%{uid}

[realms]
    «R» = {
        kdc = kdc1.«org».com
        kdc = kdc2.«org».com
        admin_server = kdc1.«org».com
    }

[domain_realm]
    .«org».com = «R»
""", R=org().upper().replace("-", "") + ".COM", org=org())
    add("krb5-conf", "none", "conf", "etc/krb5.conf", text)


def keytab_listing_none():
    realm = org().upper().replace("-", "") + ".COM"
    rows = []
    for enc in ["aes256-cts-hmac-sha1-96", "aes128-cts-hmac-sha1-96"]:
        rows.append("   %d 2025-0%d-1%d 08:1%d:03 HTTP/%s.%s.com@%s (%s)" % (R.randrange(2, 9), R.randrange(1, 9), R.randrange(0, 9), R.randrange(0, 9), app(), org(), realm, enc))
    text = "$ klist -ket /etc/%s.keytab\nKeytab name: FILE:/etc/%s.keytab\nKVNO Timestamp            Principal\n---- ------------------- ------------------------------------------------------\n%s\n\n# keytab sha256: %s\n" % (app(), app(), "\n".join(rows), sha256hex())
    add("kerberos-keytab-listing", "none", "md", "docs/kerberos-keytab.md", text)


def keytab_keys_secret():
    realm = org().upper().replace("-", "") + ".COM"
    k = hexs(64)
    text = "$ klist -kK /etc/krb5.keytab\nKeytab name: FILE:/etc/krb5.keytab\nKVNO Principal\n---- --------------------------------------------------------------------------\n   3 host/%s.%s.com@%s (0x%s)\n" % (app(), org(), realm, k)
    add("kerberos-keytab-key-dump", "secret", "txt", "notes/keytab-debug.txt", text, k)


# ================================================================= game engines
def unity_project_settings_none():
    text = T("""
%YAML 1.1
%TAG !u! tag:unity3d.com,2011:
--- !u!129 &1
PlayerSettings:
  m_ObjectHideFlags: 0
  serializedVersion: 26
  productGUID: «pg»
  AndroidProfiler: 0
  companyName: «Org»
  productName: «App»
  cloudProjectId: «cpid»
  projectId: «pid»
  bundleVersion: 0.«m».0
  AndroidKeystoreName: '{inproject}: Keystores/release.keystore'
  AndroidKeyaliasName: release
  AndroidUseCustomKeystore: 1
  applicationIdentifier:
    Android: com.«org».«app»
    iPhone: com.«org».«app»
  iOSAppleTeamID: «team»
  scriptingDefineSymbols:
    Standalone: ENABLE_ANALYTICS;UNITY_POST_PROCESSING_STACK_V2
""", pg=hexs(32), Org=org().capitalize(), App=app().capitalize(), cpid=guid(), pid=guid(), m=R.randrange(1, 20),
        org=org().replace("-", ""), app=app(), team=rs(10, UPPER + DIGITS))
    add("unity-projectsettings-guids", "none", "asset", "ProjectSettings/ProjectSettings.asset", text)


def unity_meta_none():
    text = "fileFormatVersion: 2\nguid: %s\nMonoImporter:\n  externalObjects: {}\n  serializedVersion: 2\n  defaultReferences: []\n  executionOrder: 0\n  icon: {instanceID: 0}\n  userData: \n  assetBundleName: \n  assetBundleVariant: \n" % hexs(32)
    add("unity-meta-guid", "none", "meta", "Assets/Scripts/%sController.cs.meta" % app().capitalize(), text)


def unity_keystore_secret():
    p = pw()
    text = T("""
using UnityEditor;
using UnityEngine;

public static class BuildScript
{
    [MenuItem("Build/Android Release")]
    public static void BuildAndroid()
    {
        PlayerSettings.Android.useCustomKeystore = true;
        PlayerSettings.Android.keystoreName = "Keystores/release.keystore";
        PlayerSettings.Android.keystorePass = "«p»";
        PlayerSettings.Android.keyaliasName = "release";
        PlayerSettings.Android.keyaliasPass = "«p»";
        BuildPipeline.BuildPlayer(EditorBuildSettings.scenes, "Builds/«app».aab", BuildTarget.Android, BuildOptions.None);
    }
}
""", p=p, app=app())
    add("unity-build-script-keystore-pass", "secret", "cs", "Assets/Editor/BuildScript.cs", text, p)


def godot_export_secret():
    p = pw()
    text = T("""
[preset.0]

name="Android"
platform="Android"
runnable=true
export_filter="all_resources"
export_path="build/«app».apk"

[preset.0.options]

gradle_build/use_gradle_build=false
keystore/debug=""
keystore/debug_user=""
keystore/debug_password=""
keystore/release="res://release.keystore"
keystore/release_user="«app»"
keystore/release_password="«p»"
version/code=«vc»
version/name="1.«m»"
package/unique_name="org.godotengine.«app»"
""", app=app(), p=p, vc=R.randrange(1, 99), m=R.randrange(0, 9))
    add("godot-export-presets-keystore", "secret", "cfg", "export_presets.cfg", text, p)


def godot_project_none():
    text = T("""
; Engine configuration file.
; It's best edited using the editor UI and not directly,
; since the parameters that go here are not all obvious.

config_version=5

[application]

config/name="«App»"
run/main_scene="uid://«uid»"
config/features=PackedStringArray("4.2", "Forward Plus")

[autoload]

Net="*res://scripts/net.gd"

[network]

api/base_url="https://api.«org».games"
api/key=""  ; filled from OS.get_environment("GAME_API_KEY") at runtime

[rendering]

textures/canvas_textures/default_texture_filter=0
""", App=app().capitalize(), uid=rs(13, LOWER + DIGITS), org=org())
    add("godot-project-godot", "none", "godot", "project.godot", text)


def unreal_ini_none():
    text = T("""
[/Script/EngineSettings.GeneralProjectSettings]
ProjectID=«pid»
ProjectName=«App»
CompanyName=«Org»
CopyrightNotice=Copyright «Org». All Rights Reserved.

[/Script/OnlineSubsystemUtils.IpNetDriver]
NetServerMaxTickRate=30

[OnlineSubsystemSteam]
bEnabled=true
SteamDevAppId=480

[/Script/EOSShared.EOSSettings]
ProductId=«p1»
SandboxId=«p2»
DeploymentId=«p3»
ClientId=xyza7891«cid»
ClientSecret=
EncryptionKey=
""", pid=hexs(32).upper(), App=app().capitalize(), Org=org().capitalize(), p1=hexs(32), p2=hexs(32), p3=hexs(32), cid=rs(24))
    add("unreal-defaultgame-ini-ids", "none", "ini", "Config/DefaultGame.ini", text)


def unreal_ini_secret():
    sec = rs(43, ALNUM + "+/")
    text = T("""
[/Script/EOSShared.EOSSettings]
SteamTokenType=App
ProductName=«App»
ProductVersion=1.0
ProductId=«p1»
SandboxId=«p2»
DeploymentId=«p3»
ClientId=xyza7891«cid»
ClientSecret=«sec»
bEnableOverlay=True
""", App=app().capitalize(), p1=hexs(32), p2=hexs(32), p3=hexs(32), cid=rs(24), sec=sec)
    add("unreal-eos-client-secret", "secret", "ini", "Config/DefaultEngine.ini", text, sec)


# ================================================================= IoT / embedded
def arduino_secret():
    p = pw(safe=True) if R.random() < 0.7 else _rs(10, DIGITS + "ABCDEF") + rs(4, DIGITS)
    room = pick("garage", "attic", "greenhouse", "pond")
    ssid = pick("FRITZ!Box 7590 XY", "Vodafone-%s" % rs(4, UPPER + DIGITS), "%s-IoT" % org().capitalize(), "Livebox-%s" % rs(4, UPPER + DIGITS))
    text = T("""
#include <WiFi.h>
#include <PubSubClient.h>

const char* ssid     = "«ssid»";
const char* password = "«p»";
const char* mqtt_server = "192.168.«a».«b»";

WiFiClient espClient;
PubSubClient client(espClient);

void setup() {
  Serial.begin(115200);
  WiFi.begin(ssid, password);
  while (WiFi.status() != WL_CONNECTED) {
    delay(500);
    Serial.print(".");
  }
  client.setServer(mqtt_server, 1883);
}

void loop() {
  if (!client.connected()) {
    client.connect("«cid»");
  }
  client.publish("sensors/«room»/temp", String(readTemp()).c_str());
  delay(10000);
}
""", ssid=ssid, p=p, a=R.randrange(0, 9), b=R.randrange(2, 250), cid="esp32-" + hexs(6), room=room)
    add("arduino-wifi-password", "secret", "ino", "%s_sensor/%s_sensor.ino" % (room, room), text, p)


def arduino_none():
    text = T("""
#include <ESP8266WiFi.h>
#include "arduino_secrets.h"
// arduino_secrets.h is git-ignored; see arduino_secrets.h.example

char ssid[] = SECRET_SSID;
char pass[] = SECRET_PASS;
const char* ota_hash = "«md5»";   // MD5 of the OTA password, not the password

void setup() {
  Serial.begin(9600);
  WiFi.begin(ssid, pass);
  ArduinoOTA.setPasswordHash(ota_hash);
  ArduinoOTA.begin();
}

void loop() { ArduinoOTA.handle(); }
""", md5=hexs(32))
    add("arduino-secrets-header-ref", "none", "ino", "firmware/firmware.ino", text)


def arduino_secrets_example_none():
    text = '#define SECRET_SSID "your-network-name"\n#define SECRET_PASS "your-wifi-password"\n#define SECRET_MQTT_USER ""\n#define SECRET_MQTT_PASS "********"\n'
    add("arduino-secrets-example", "none", "example", "firmware/arduino_secrets.h.example", text)


def arduino_secrets_h_secret():
    p = pw(safe=True)
    text = '#pragma once\n#define SECRET_SSID "%s"\n#define SECRET_PASS "%s"\n#define MQTT_HOST "mqtt.local"\n' % (pick("HomeNet-5G", "TP-Link_%s" % hexs(4).upper()), p)
    add("arduino-secrets-h", "secret", "h", "firmware/arduino_secrets.h", text, p)


def esphome_secret():
    kind = R.randrange(2)
    key = b64(32)
    p = pw(safe=True)
    sec = key if kind == 0 else p
    dev = pick(("porch-sensor", "Porch", "porch"), ("garage-door", "Garage", "garage"), ("plant-monitor", "Plants", "plants"))
    text = T("""
esphome:
  name: «name»
  friendly_name: «Name»

esp32:
  board: esp32dev

logger:

api:
  encryption:
    key: «k»

ota:
  - platform: esphome
    password: !secret ota_password

wifi:
  ssid: !secret wifi_ssid
  password: «w»
  ap:
    ssid: "«Name» Fallback"
    password: !secret fallback_password

sensor:
  - platform: dht
    pin: GPIO4
    temperature:
      name: "Temperature"
    update_interval: 60s
""", name=dev[0], Name=dev[1],
        k=('"%s"' % key) if kind == 0 else "!secret api_key", w=('"%s"' % p) if kind == 1 else "!secret wifi_password")
    add("esphome-inline-secret", "secret", "yaml", "esphome/%s.yaml" % dev[2], text, sec)


def esphome_none():
    dev = pick("kitchen-plug", "desk-lamp", "boiler")
    text = T("""
substitutions:
  name: «name»
esphome:
  name: ${name}
esp8266:
  board: d1_mini
api:
  encryption:
    key: !secret api_encryption_key
ota:
  - platform: esphome
    password: !secret ota_password
wifi:
  ssid: !secret wifi_ssid
  password: !secret wifi_password
  manual_ip:
    static_ip: 192.168.«a».«b»
    gateway: 192.168.«a».1
    subnet: 255.255.255.0
mqtt:
  broker: mqtt.local
  username: ${name}
  password: !secret mqtt_password
""", name=dev, a=R.randrange(0, 9), b=R.randrange(20, 250))
    add("esphome-secret-refs", "none", "yaml", "esphome/%s.yaml" % dev, text)


def esphome_secrets_example_none():
    text = "# Copy to secrets.yaml\nwifi_ssid: \"MyNetwork\"\nwifi_password: \"changeme\"\napi_encryption_key: \"<generate with: openssl rand -base64 32>\"\nota_password: \"changeme\"\nmqtt_password: \"\"\n"
    add("esphome-secrets-example", "none", "yaml", "esphome/secrets.yaml.example", text)


def mqtt_python_secret():
    p = pw(safe=True)
    text = T("""
import json
import time

import paho.mqtt.client as mqtt

BROKER = "«b»"
client = mqtt.Client(client_id="«cid»")
client.username_pw_set("«u»", "«p»")
client.tls_set()
client.connect(BROKER, 8883, keepalive=60)

while True:
    client.publish("«topic»", json.dumps({"ts": time.time(), "ok": True}))
    time.sleep(30)
""", b=pick("mqtt.%s.io" % org(), "a%s-ats.iot.eu-west-1.amazonaws.com" % rs(12, LOWER + DIGITS)), cid="gw-" + hexs(8), u=pick("gateway", "telemetry"), p=p, topic="site/%s/heartbeat" % rs(6, LOWER))
    add("mqtt-client-password", "secret", "py", "gateway/heartbeat.py", text, p)


def zigbee2mqtt_secret():
    nk = ", ".join(str(R.randrange(0, 256)) for _ in range(16))
    text = T("""
homeassistant: true
permit_join: false
mqtt:
  base_topic: zigbee2mqtt
  server: mqtt://localhost:1883
  user: zigbee
  password: '!secret mqtt_password'
serial:
  port: /dev/ttyUSB0
advanced:
  network_key: [«nk»]
  pan_id: «pan»
  ext_pan_id: [«ep»]
  channel: «ch»
frontend:
  port: 8080
""", nk=nk, pan=R.randrange(1000, 65000), ep=", ".join(str(R.randrange(0, 256)) for _ in range(8)), ch=pick(11, 15, 20, 25))
    add("zigbee2mqtt-network-key", "secret", "yaml", "zigbee2mqtt/configuration.yaml", text, "[" + nk + "]")


# ================================================================= browser extensions
def extension_manifest_none():
    d = {"manifest_version": 3, "name": "%s Clipper" % app().capitalize(), "version": "1.%d.%d" % (R.randrange(0, 9), R.randrange(0, 20)),
         "key": base64.b64encode(PUBKEY + _rb(261)).decode(),
         "oauth2": {"client_id": google_client_id(), "scopes": ["https://www.googleapis.com/auth/drive.file"]},
         "permissions": ["storage", "identity", "activeTab"],
         "background": {"service_worker": "background.js"},
         "content_security_policy": {"extension_pages": "script-src 'self'; object-src 'self'"},
         "web_accessible_resources": [{"resources": ["inject.js"], "matches": ["<all_urls>"]}]}
    add("browser-extension-manifest-public-key", "none", "json", "extension/manifest.json", json.dumps(d, indent=2) + "\n")


def extension_update_manifest_none():
    text = T("""
<?xml version='1.0' encoding='UTF-8'?>
<gupdate xmlns='http://www.google.com/update2/response' protocol='2.0'>
  <app appid='«id»'>
    <updatecheck codebase='https://ext.«org».io/«app»-«v».crx' version='«v»' hash_sha256='«h»' />
  </app>
</gupdate>
""", id=rs(32, "abcdefghijklmnop"), org=org(), app=app(), v="2.%d.%d" % (R.randrange(0, 9), R.randrange(0, 9)), h=sha256hex())
    add("browser-extension-update-xml", "none", "xml", "dist/updates.xml", text)


def extension_background_secret():
    tok = pick(openai_key, anthropic_key, hf_tok, google_key)()
    text = T("""
// background.js (MV3 service worker)
const API_KEY = "«tok»";
const ENDPOINT = "«ep»";

chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
  if (msg.type !== "summarize") return;
  fetch(ENDPOINT, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${API_KEY}` },
    body: JSON.stringify({ input: msg.text.slice(0, 8000) }),
  })
    .then((r) => r.json())
    .then((data) => sendResponse({ ok: true, data }))
    .catch((e) => sendResponse({ ok: false, error: String(e) }));
  return true;
});
""", tok=tok, ep=pick("https://api.openai.com/v1/responses", "https://api.anthropic.com/v1/messages", "https://api-inference.huggingface.co/models/facebook/bart-large-cnn", "https://generativelanguage.googleapis.com/v1beta/models/gemini-pro:generateContent"))
    add("browser-extension-background-key", "secret", "js", pick("extension/background.js", "src/background.js"), text, tok)


def extension_sri_none():
    text = T("""
<!doctype html>
<html>
<head>
  <meta charset="utf-8">
  <title>«App» options</title>
  <link rel="stylesheet" href="https://cdn.jsdelivr.net/npm/water.css@2/out/water.min.css" integrity="«s1»" crossorigin="anonymous">
  <script src="vendor/purify.min.js" integrity="«s2»"></script>
</head>
<body>
  <label>API key <input id="apiKey" type="password" placeholder="sk-..." autocomplete="off"></label>
  <button id="save">Save</button>
  <script src="options.js"></script>
</body>
</html>
""", App=app().capitalize(), s1=sri("sha384"), s2=sri("sha512"))
    add("browser-extension-options-sri", "none", "html", "extension/options.html", text)


# ================================================================= plan
PLAN = [
    # Kotlin / Gradle / Android
    (gradle_properties_signing_secret, 1), (gradle_properties_maven_secret, 1), (gradle_properties_none, 2),
    (gradle_wrapper_none, 1), (local_properties_secret, 1), (local_properties_none, 1),
    (build_gradle_kts_signing_secret, 1), (build_gradle_kts_env_none, 2), (gradle_verification_metadata_none, 1),
    (kotlin_source_secret, 1),
    # Swift / Xcode
    (info_plist_none, 2), (info_plist_secret, 1), (google_service_info_secret, 1), (entitlements_none, 2),
    (xcconfig_none, 2), (swift_source_secret, 1), (swift_keychain_none, 1),
    # Dart / Flutter
    (pubspec_lock_none, 1), (pubspec_yaml_none, 1), (dart_env_secret, 1), (dart_env_none, 1), (flutter_dotenv_example_none, 1),
    # Lua
    (nvim_lua_none, 2), (nvim_lua_secret, 1), (openresty_redis_secret, 1), (openresty_env_none, 2), (redis_lua_script_none, 1),
    # Perl
    (perl_dbi_secret, 1), (perl_env_none, 1), (perl_lwp_secret, 1),
    # PHP
    (wp_config_secret, 1), (wp_config_none, 1), (wp_salts_secret, 1), (symfony_env_none, 1), (symfony_env_local_secret, 1),
    (symfony_parameters_none, 1), (symfony_parameters_secret, 1), (drupal_settings_secret, 1), (drupal_settings_hashsalt_secret, 1),
    (drupal_settings_none, 1), (composer_auth_secret, 1), (composer_auth_http_basic_secret, 1), (composer_lock_none, 1),
    # Elixir / Erlang / Clojure / Haskell
    (elixir_prod_secret, 1), (elixir_runtime_none, 1), (elixir_config_salts_none, 2), (erlang_vm_args_secret, 1),
    (erlang_sys_config_none, 1), (clojure_profiles_secret, 1), (clojure_deps_none, 1), (haskell_config_secret, 1), (haskell_stack_none, 1),
    # Julia / R
    (julia_project_none, 1), (julia_manifest_none, 1), (julia_script_secret, 1), (renviron_secret, 1), (renviron_db_secret, 1),
    (rprofile_none, 1), (renv_lock_none, 1),
    # PowerShell / batch
    (ps1_securestring_secret, 1), (ps1_none, 1), (ps1_dsc_encrypted_none, 1), (bat_secret, 1), (cmd_none, 1), (cmd_secret, 1),
    # Nix / Bazel / CMake
    (flake_lock_none, 1), (flake_nix_none, 1), (nixos_config_none, 2), (nixos_config_secret, 1), (bazel_workspace_none, 1),
    (module_bazel_lock_none, 1), (bazelrc_secret, 1), (bazelrc_none, 1), (cmake_fetchcontent_none, 1), (cmake_secret, 1),
    # package managers
    (maven_settings_secret, 1), (maven_settings_none, 1), (pom_none, 1), (pom_secret, 1), (nuget_config_secret, 1),
    (nuget_config_none, 1), (csproj_none, 1), (cargo_credentials_secret, 1), (cargo_config_none, 1), (cargo_config_secret, 1),
    (yarnrc_secret, 1), (yarnrc_none, 1), (yarn_lock_none, 2), (bundler_config_secret, 1), (bundler_config_none, 1),
    # k8s / gitops
    (helm_values_secret, 1), (helm_values_none, 2), (helm_template_none, 1), (k8s_secret_data_secret, 1), (kustomize_secret, 1),
    (kustomize_none, 1), (argocd_repo_secret, 1), (argocd_cm_none, 1), (argocd_app_none, 1),
    # vault / consul / sops / age / signing
    (vault_policy_none, 1), (vault_server_none, 1), (vault_agent_secret, 1), (terraform_vault_secret, 1), (consul_secret, 1),
    (consul_none, 1), (sops_yaml_none, 2), (sops_json_none, 1), (sops_config_none, 1), (ansible_vault_none, 1),
    (age_keys_secret, 1), (age_recipients_none, 2), (age_encrypted_none, 1), (minisign_pub_none, 1), (minisign_sec_secret, 1),
    (signify_pub_none, 1), (signify_sig_none, 2), (gpg_public_none, 2), (gpg_private_secret, 1), (gpg_sig_none, 1),
    # ssh / pem / jwks
    (known_hosts_none, 2), (authorized_keys_none, 2), (ssh_config_none, 1), (ssh_private_secret, 1), (ssh_pub_and_fingerprint_none, 1),
    (pem_cert_none, 2), (pem_csr_none, 1), (pem_ca_bundle_none, 1), (pem_private_secret, 1), (pem_private_in_config_secret, 1),
    (jwks_public_none, 2), (jwk_private_secret, 1), (jwk_okp_private_secret, 1),
    # vpn / overlay
    (wireguard_secret, 1), (wireguard_psk_secret, 1), (wireguard_none, 1), (wireguard_template_none, 1), (openvpn_secret, 1),
    (openvpn_none, 1), (tailscale_secret, 2), (tailscale_none, 1), (zerotier_secret, 1), (zerotier_none, 1),
    # systemd / cron
    (systemd_env_secret, 1), (systemd_none, 1), (systemd_envfile_secret, 1), (systemd_creds_none, 1), (crontab_secret, 2), (crontab_none, 1),
    # web servers
    (htpasswd_none, 2), (nginx_basic_header_secret, 1), (nginx_none, 2), (caddy_none, 2), (caddy_secret, 1), (traefik_none, 2),
    (traefik_secret, 1), (haproxy_secret, 1), (haproxy_none, 2),
    # monitoring
    (prometheus_secret, 1), (prometheus_none, 1), (alertmanager_secret, 1), (alertmanager_pagerduty_secret, 1), (alertmanager_none, 1),
    (grafana_ini_secret, 1), (grafana_datasource_none, 1), (grafana_datasource_secret, 1),
    # databases / brokers / directory
    (pg_dump_header_none, 2), (mysql_dump_secret, 1), (mysql_dump_none, 2), (redis_conf_secret, 1), (redis_acl_none, 2),
    (rabbitmq_secret, 1), (rabbitmq_defs_none, 2), (kafka_sasl_secret, 2), (kafka_none, 1), (mosquitto_none, 1),
    (ldif_secret, 1), (ldif_none, 2), (ldap_conf_secret, 1), (sssd_none, 1), (krb5_none, 1), (keytab_listing_none, 1), (keytab_keys_secret, 1),
    # game engines
    (unity_project_settings_none, 1), (unity_meta_none, 1), (unity_keystore_secret, 1), (godot_export_secret, 1), (godot_project_none, 1),
    (unreal_ini_none, 1), (unreal_ini_secret, 1),
    # IoT
    (arduino_secret, 1), (arduino_none, 1), (arduino_secrets_example_none, 1), (arduino_secrets_h_secret, 1), (esphome_secret, 1),
    (esphome_none, 1), (esphome_secrets_example_none, 1), (mqtt_python_secret, 1), (zigbee2mqtt_secret, 1),
    # browser extensions
    (extension_manifest_none, 1), (extension_update_manifest_none, 1), (extension_background_secret, 1), (extension_sri_none, 1),
]


def main():
    for fn, n in PLAN:
        for _ in range(n):
            fn()
    texts = set()
    secrets = set()
    for c in CASES:
        assert c["text"] not in texts, ("duplicate text", c["class"])
        texts.add(c["text"])
        if c["_secret"] is not None:
            assert c["_secret"] not in secrets, ("secret reused", c["class"])
            secrets.add(c["_secret"])
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "generator10.jsonl")
    with open(out, "w", encoding="utf-8") as f:
        for c in CASES:
            row = {k: c[k] for k in ("source", "class", "label", "ext", "path", "origin", "text")}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    n_secret = sum(1 for c in CASES if c["label"] == "secret")
    print("wrote %d cases (%d secret, %d none, %d classes) to %s" % (
        len(CASES), n_secret, len(CASES) - n_secret, len({c["class"] for c in CASES}), out))


if __name__ == "__main__":
    main()
