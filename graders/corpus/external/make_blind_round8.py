#!/usr/bin/env python3
"""Blind held-out round 8: JavaScript/TypeScript application ecosystem.

Written without reading the scanner, its tests or the other corpora.
Deterministic: random.Random(20261209). Writes generator11.jsonl next to
this file. Stdlib only.
"""
import base64
import hashlib
import hmac
import json
import os
import random
import string

ORIGIN = "make_blind_round8.py seed 20261209"
SOURCE = "generator-11"
R = random.Random(20261209)
SEEN = set()

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DG = string.digits
AN = UP + LO + DG
HEX = "0123456789abcdef"
B64 = AN + "+/"
URLSAFE = AN + "-_"


def u(fn):
    """Draw a value never seen before in this corpus."""
    while True:
        v = fn()
        if v not in SEEN:
            SEEN.add(v)
            return v


def rs(alpha, n):
    return u(lambda: "".join(R.choice(alpha) for _ in range(n)))


def mixed(n, alpha=AN):
    # ensure a realistic mix of classes so values do not look like walks
    while True:
        v = "".join(R.choice(alpha) for _ in range(n))
        if any(c in UP for c in v) and any(c in LO for c in v) and any(c in DG for c in v) and v not in SEEN:
            SEEN.add(v)
            return v


def hx(n):
    return rs(HEX, n)


def uuid4():
    def f():
        h = "".join(R.choice(HEX) for _ in range(32))
        h = h[:12] + "4" + h[13:16] + R.choice("89ab") + h[17:]
        return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])
    return u(f)


def b64u(b):
    return base64.urlsafe_b64encode(b).decode().rstrip("=")


def jwt(payload, sig_len=43):
    head = b64u(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    body = b64u(json.dumps(payload, separators=(",", ":")).encode())
    return u(lambda: head + "." + body + "." + "".join(R.choice(URLSAFE) for _ in range(sig_len)))


def word():
    return R.choice(["acme", "orbit", "lumen", "harbor", "pylon", "tandem", "quill", "mosaic", "cedar", "fjord",
                     "nimbus", "ember", "vertex", "kiwi", "sable", "atlas", "drift", "prism", "otter", "basalt"])


def name():
    return word() + R.choice(["-app", "-web", "-api", "-dashboard", "-portal", "-shop", "-console", "", "-next"])


def pick(*xs):
    return R.choice(xs)


# ---------------------------------------------------------------- credential shapes
def stripe_sk():
    return "sk_live_" + mixed(R.choice([24, 34, 99]))


def stripe_rk():
    return "rk_live_" + mixed(R.choice([24, 99]))


def stripe_pk():
    return "pk_live_" + mixed(R.choice([24, 99]))


def ghp():
    return "ghp_" + mixed(36)


def gh_fine():
    return "github_pat_11" + rs(UP + DG, 20) + "_" + mixed(59, AN)


def npm_tok():
    return "npm_" + mixed(36)


def slack_bot():
    return u(lambda: "xoxb-%d-%d-%s" % (R.randint(10**10, 10**13 - 1), R.randint(10**11, 10**13 - 1), "".join(R.choice(AN) for _ in range(24))))


def slack_hook():
    return u(lambda: "https://hooks.slack.com/services/T%s/B%s/%s" % ("".join(R.choice(UP + DG) for _ in range(10)), "".join(R.choice(UP + DG) for _ in range(10)), "".join(R.choice(AN) for _ in range(24))))


def openai_key():
    if R.random() < 0.5:
        return "sk-proj-" + mixed(R.choice([48, 64])) + "T3BlbkFJ" + mixed(R.choice([24, 32]), URLSAFE)
    return "sk-" + mixed(20) + "T3BlbkFJ" + mixed(20)


def anthropic_key():
    return "sk-ant-api03-" + mixed(93, URLSAFE) + "AA"


def aws_pair():
    return "AKIA" + rs(UP + "234567", 16), mixed(40, B64)


def sendgrid():
    return "SG." + mixed(22, URLSAFE) + "." + mixed(43, URLSAFE)


def twilio_sk():
    return "SK" + hx(32)


def google_api():
    return "AIza" + mixed(35, URLSAFE)


def mapbox(kind, user):
    body = b64u(json.dumps({"u": user, "a": "cl" + rs(LO + DG, 23)}, separators=(",", ":")).encode())
    return kind + ".eyJ" + body[3:] + "." + mixed(22, URLSAFE)


def posthog_personal():
    return "phx_" + mixed(43)


def posthog_project():
    return "phc_" + mixed(43)


def discord_hook():
    return "https://discord.com/api/webhooks/%d/%s" % (R.randint(10**17, 10**19 - 1), mixed(68, URLSAFE))


def telegram_bot():
    return "%d:AA%s" % (R.randint(10**9, 7 * 10**9), mixed(33, URLSAFE))


def ld_server():
    return "sdk-" + uuid4()


def pg_url(pw):
    return "postgresql://%s:%s@%s.%s:5432/%s" % (pick("app", "postgres", "svc_" + word(), "admin"), pw, pick("db", "pg", "primary"), pick("internal.example.net", "rds.amazonaws.com", "neon.tech", "supabase.co"), word())


def password():
    return mixed(R.randint(18, 28), AN + "!#%^*-_")


def pem_key():
    raw = bytes(R.getrandbits(8) for _ in range(R.choice([912, 1190])))
    b = base64.b64encode(b"\x30\x82\x04\xa4\x02\x01\x00\x02\x82\x01\x01\x00" + raw).decode()
    SEEN.add(b)
    lines = [b[i:i + 64] for i in range(0, len(b), 64)]
    return "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END RSA PRIVATE KEY-----"


def sha512_integrity():
    return "sha512-" + base64.b64encode(bytes(R.getrandbits(8) for _ in range(64))).decode()


def sha1():
    return hx(40)


CASES = []


def add(cls, label, ext, path, text, needle=None):
    CASES.append({"source": SOURCE, "class": cls, "label": label, "ext": ext, "path": path,
                  "origin": ORIGIN, "text": text, "_needle": needle})


# ================================================================= SECRET classes
def c_next_config_stripe():
    k = stripe_sk()
    t = f"""/** @type {{import('next').NextConfig}} */
const nextConfig = {{
  reactStrictMode: true,
  images: {{ domains: ['cdn.{word()}.io'] }},
  env: {{
    STRIPE_SECRET_KEY: '{k}',
    NEXT_PUBLIC_SITE_URL: process.env.VERCEL_URL ?? 'http://localhost:3000',
  }},
  experimental: {{ serverActions: {{ bodySizeLimit: '2mb' }} }},
}}

module.exports = nextConfig
"""
    add("nextjs-config-env-stripe", "secret", "js", f"apps/{name()}/next.config.js", t, k)


def c_route_handler_openai():
    k = openai_key()
    v = pick("openai", "client", "ai")
    t = f"""import OpenAI from 'openai'
import {{ NextResponse }} from 'next/server'

// TODO move to env before launch
const {v} = new OpenAI({{ apiKey: "{k}" }})

export const runtime = 'edge'

export async function POST(req: Request) {{
  const {{ prompt }} = await req.json()
  const completion = await {v}.chat.completions.create({{
    model: 'gpt-4o-mini',
    messages: [{{ role: 'user', content: prompt }}],
  }})
  return NextResponse.json({{ text: completion.choices[0]?.message?.content }})
}}
"""
    add("next-route-handler-openai", "secret", "ts", f"src/app/api/{pick('chat','complete','summarize')}/route.ts", t, k)


def c_server_action_anthropic():
    k = anthropic_key()
    t = f"""'use server'

import Anthropic from '@anthropic-ai/sdk'
import {{ revalidatePath }} from 'next/cache'

const anthropic = new Anthropic({{
  apiKey: '{k}',
}})

export async function summarize(formData: FormData) {{
  const body = String(formData.get('body') ?? '')
  const msg = await anthropic.messages.create({{
    model: 'claude-3-5-sonnet-latest',
    max_tokens: 512,
    messages: [{{ role: 'user', content: `Summarize:\\n${{body}}` }}],
  }})
  revalidatePath('/notes')
  return msg.content
}}
"""
    add("next-server-action-anthropic", "secret", "ts", f"app/{pick('notes','posts','tickets')}/actions.ts", t, k)


def c_express_config_module():
    k = sendgrid()
    t = f"""'use strict';

const path = require('path');
require('dotenv').config({{ path: path.join(__dirname, '..', '.env') }});

module.exports = {{
  port: Number(process.env.PORT) || {R.choice([3000, 4000, 8080])},
  logLevel: process.env.LOG_LEVEL || 'info',
  mail: {{
    provider: 'sendgrid',
    from: 'no-reply@{word()}.com',
    apiKey: process.env.SENDGRID_API_KEY || '{k}',
  }},
  session: {{
    cookieName: 'sid',
    secret: process.env.SESSION_SECRET,
  }},
}};
"""
    add("express-config-sendgrid-fallback", "secret", "js", f"server/config/{pick('index','default','config')}.js", t, k)


def c_nest_jwt_module():
    s = mixed(R.choice([40, 48, 64]), AN + "-_")
    t = f"""import {{ Module }} from '@nestjs/common';
import {{ JwtModule }} from '@nestjs/jwt';
import {{ PassportModule }} from '@nestjs/passport';
import {{ AuthService }} from './auth.service';
import {{ JwtStrategy }} from './jwt.strategy';

export const jwtConstants = {{
  secret: '{s}',
}};

@Module({{
  imports: [
    PassportModule,
    JwtModule.register({{
      secret: jwtConstants.secret,
      signOptions: {{ expiresIn: '{R.choice([15, 30, 60])}m' }},
    }}),
  ],
  providers: [AuthService, JwtStrategy],
  exports: [AuthService],
}})
export class AuthModule {{}}
"""
    add("nestjs-jwt-constants", "secret", "ts", f"src/auth/{pick('auth.module','constants')}.ts", t, s)


def c_nextauth_github():
    cid = "Iv1." + hx(16)
    cs = hx(40)
    t = f"""import NextAuth from 'next-auth'
import GitHub from 'next-auth/providers/github'

export const {{ handlers, auth, signIn, signOut }} = NextAuth({{
  providers: [
    GitHub({{
      clientId: '{cid}',
      clientSecret: '{cs}',
    }}),
  ],
  session: {{ strategy: 'jwt' }},
  callbacks: {{
    async session({{ session, token }}) {{
      if (token.sub) session.user.id = token.sub
      return session
    }},
  }},
}})
"""
    add("authjs-github-client-secret", "secret", "ts", pick("auth.ts", "src/auth.ts", "lib/auth.ts"), t, cs)


def c_nextauth_google():
    cid = "%d-%s.apps.googleusercontent.com" % (R.randint(10**11, 10**12 - 1), rs(LO + DG, 32))
    cs = "GOCSPX-" + mixed(28, URLSAFE)
    t = f"""import NextAuth, {{ type NextAuthOptions }} from "next-auth";
import GoogleProvider from "next-auth/providers/google";
import {{ PrismaAdapter }} from "@auth/prisma-adapter";
import {{ prisma }} from "@/lib/prisma";

export const authOptions: NextAuthOptions = {{
  adapter: PrismaAdapter(prisma),
  providers: [
    GoogleProvider({{
      clientId: "{cid}",
      clientSecret: "{cs}",
    }}),
  ],
  pages: {{ signIn: "/login" }},
}};

const handler = NextAuth(authOptions);
export {{ handler as GET, handler as POST }};
"""
    add("nextauth-google-client-secret", "secret", "ts", "src/app/api/auth/[...nextauth]/route.ts", t, cs)


def c_supabase_service_role():
    ref = rs(LO, 20)
    k = jwt({"iss": "supabase", "ref": ref, "role": "service_role", "iat": R.randint(1690000000, 1720000000), "exp": R.randint(2000000000, 2100000000)})
    t = f"""import {{ createClient }} from '@supabase/supabase-js'

// admin client used by cron jobs only (bypasses RLS)
const SUPABASE_URL = 'https://{ref}.supabase.co'
const SUPABASE_SERVICE_ROLE_KEY =
  '{k}'

export const supabaseAdmin = createClient(SUPABASE_URL, SUPABASE_SERVICE_ROLE_KEY, {{
  auth: {{ persistSession: false, autoRefreshToken: false }},
}})

export async function purgeExpired() {{
  const {{ error }} = await supabaseAdmin.from('sessions').delete().lt('expires_at', new Date().toISOString())
  if (error) throw error
}}
"""
    add("supabase-service-role-jwt", "secret", "ts", f"lib/supabase/{pick('admin','server-admin','service')}.ts", t, k)


def c_prisma_env_dburl():
    pw = password()
    url = pg_url(pw)
    t = f"""# Environment variables declared in this file are automatically made available to Prisma.
# See the documentation for more detail: https://pris.ly/d/prisma-schema#accessing-environment-variables-from-the-schema

DATABASE_URL="{url}?schema=public&sslmode=require"
NEXT_PUBLIC_APP_NAME="{word().title()}"
NODE_ENV=development
"""
    add("prisma-dotenv-database-url", "secret", "env", pick(".env", "packages/db/.env", "apps/web/.env.local"), t, pw)


def c_knexfile():
    pw = password()
    t = f"""// Update with your config settings.

/**
 * @type {{ Object.<string, import("knex").Knex.Config> }}
 */
module.exports = {{
  development: {{
    client: 'sqlite3',
    connection: {{ filename: './dev.sqlite3' }},
    useNullAsDefault: true,
  }},

  production: {{
    client: 'postgresql',
    connection: {{
      host: '{word()}-prod.{hx(12)}.eu-west-1.rds.amazonaws.com',
      database: '{word()}',
      user: 'app_rw',
      password: '{pw}',
    }},
    pool: {{ min: 2, max: 10 }},
    migrations: {{ tableName: 'knex_migrations' }},
  }},
}};
"""
    add("knexfile-production-password", "secret", "js", "knexfile.js", t, pw)


def c_typeorm_datasource():
    pw = password()
    url = "mysql://root:%s@%s:3306/%s" % (pw, pick("10.0.3.12", "mysql.internal", "db"), word())
    t = f"""import 'reflect-metadata';
import {{ DataSource }} from 'typeorm';
import {{ User }} from './entity/User';
import {{ Order }} from './entity/Order';

export const AppDataSource = new DataSource({{
  type: 'mysql',
  url: '{url}',
  synchronize: false,
  logging: ['error'],
  entities: [User, Order],
  migrations: ['src/migration/**/*.ts'],
}});
"""
    add("typeorm-datasource-mysql-url", "secret", "ts", "src/data-source.ts", t, pw)


def c_npmrc_token():
    k = npm_tok()
    t = f"""registry=https://registry.npmjs.org/
@{word()}:registry=https://registry.npmjs.org/
//registry.npmjs.org/:_authToken={k}
save-exact=true
engine-strict=true
"""
    add("npmrc-npm-automation-token", "secret", "npmrc", ".npmrc", t, k)


def c_yarnrc_gh_packages():
    k = ghp()
    t = f"""nodeLinker: node-modules
enableGlobalCache: true

npmScopes:
  {word()}:
    npmRegistryServer: "https://npm.pkg.github.com"
    npmAlwaysAuth: true
    npmAuthToken: "{k}"

yarnPath: .yarn/releases/yarn-4.{R.randint(0,5)}.{R.randint(0,9)}.cjs
"""
    add("yarnrc-github-packages-pat", "secret", "yml", ".yarnrc.yml", t, k)


def c_wrangler_vars():
    k = mixed(40, URLSAFE)
    t = f"""name = "{name()}-worker"
main = "src/index.ts"
compatibility_date = "2024-{R.randint(1,12):02d}-{R.randint(1,28):02d}"

[[kv_namespaces]]
binding = "CACHE"
id = "{hx(32)}"

[vars]
ENVIRONMENT = "production"
UPSTREAM_URL = "https://api.{word()}.dev"
CLOUDFLARE_API_TOKEN = "{k}"
"""
    add("wrangler-vars-cf-api-token", "secret", "toml", "wrangler.toml", t, k)


def c_worker_slack_hook():
    h = slack_hook()
    t = f"""export interface Env {{
  DB: D1Database
}}

const WEBHOOK = '{h}'

export default {{
  async scheduled(_event: ScheduledEvent, env: Env, ctx: ExecutionContext) {{
    const {{ results }} = await env.DB.prepare('select count(*) as n from signups where day = date()').all()
    ctx.waitUntil(
      fetch(WEBHOOK, {{
        method: 'POST',
        headers: {{ 'content-type': 'application/json' }},
        body: JSON.stringify({{ text: `signups today: ${{results[0].n}}` }}),
      }}),
    )
  }},
}}
"""
    add("cf-worker-slack-webhook", "secret", "ts", "src/index.ts", t, h)


def c_firebase_fn_stripe_rk():
    k = stripe_rk()
    t = f"""const functions = require("firebase-functions/v2");
const admin = require("firebase-admin");
const Stripe = require("stripe");

admin.initializeApp();
const stripe = new Stripe("{k}", {{ apiVersion: "2024-06-20" }});

exports.syncInvoices = functions.scheduler.onSchedule("every 6 hours", async () => {{
  const invoices = await stripe.invoices.list({{ limit: 50, status: "paid" }});
  const batch = admin.firestore().batch();
  for (const inv of invoices.data) {{
    batch.set(admin.firestore().doc(`invoices/${{inv.id}}`), {{ amount: inv.amount_paid }});
  }}
  await batch.commit();
}});
"""
    add("firebase-function-stripe-restricted", "secret", "js", "functions/index.js", t, k)


def c_aws_sdk_v3():
    ak, sk = aws_pair()
    t = f"""import {{ S3Client, PutObjectCommand }} from "@aws-sdk/client-s3";

const s3 = new S3Client({{
  region: "{pick('us-east-1','eu-central-1','ap-southeast-2')}",
  credentials: {{
    accessKeyId: "{ak}",
    secretAccessKey: "{sk}",
  }},
}});

export async function uploadAvatar(userId: string, body: Buffer) {{
  await s3.send(
    new PutObjectCommand({{
      Bucket: "{word()}-avatars",
      Key: `u/${{userId}}.webp`,
      Body: body,
      ContentType: "image/webp",
    }}),
  );
}}
"""
    add("aws-sdk-v3-static-credentials", "secret", "ts", f"src/lib/{pick('s3','storage','upload')}.ts", t, sk)


def c_twilio_node():
    sid = "AC" + hx(32)
    tok = hx(32)
    t = f"""const twilio = require('twilio')

const accountSid = '{sid}'
const authToken = '{tok}'
const client = twilio(accountSid, authToken)

async function sendOtp(to, code) {{
  return client.messages.create({{
    body: `Your {word()} code is ${{code}}`,
    from: '+1{R.randint(2000000000, 9999999999)}',
    to,
  }})
}}

module.exports = {{ sendOtp }}
"""
    add("twilio-auth-token-node", "secret", "js", f"{pick('src','lib','server')}/sms.js", t, tok)


def c_slack_bolt():
    k = slack_bot()
    sgn = "process.env.SLACK_SIGNING_SECRET"
    t = f"""import {{ App }} from '@slack/bolt';

const app = new App({{
  token: '{k}',
  signingSecret: {sgn},
}});

app.command('/deploy', async ({{ command, ack, respond }}) => {{
  await ack();
  await respond(`Deploying ${{command.text || 'main'}}...`);
}});

(async () => {{
  await app.start(Number(process.env.PORT) || 3000);
  console.log('bolt app running');
}})();
"""
    add("slack-bolt-bot-token", "secret", "ts", "src/app.ts", t, k)


def c_mapbox_secret():
    k = mapbox("sk", word() + str(R.randint(1, 99)))
    t = f"""#!/usr/bin/env node
// uploads tilesets to mapbox; needs a secret token with uploads:write
import fetch from 'node-fetch'

const USER = '{word()}'
const TOKEN = '{k}'

const res = await fetch(`https://api.mapbox.com/uploads/v1/${{USER}}/credentials?access_token=${{TOKEN}}`, {{
  method: 'POST',
}})
if (!res.ok) throw new Error(`mapbox ${{res.status}}`)
console.log(await res.json())
"""
    add("mapbox-secret-token-script", "secret", "mjs", "scripts/upload-tiles.mjs", t, k)


def c_algolia_admin():
    app = rs(UP + DG, 10)
    k = hx(32)
    t = f"""import algoliasearch from 'algoliasearch'
import {{ getAllPosts }} from '../lib/posts'

const client = algoliasearch('{app}', '{k}') // admin key: needed for saveObjects
const index = client.initIndex('{word()}_posts')

async function main() {{
  const posts = await getAllPosts()
  await index.replaceAllObjects(posts.map((p) => ({{ objectID: p.slug, ...p }})))
  console.log(`indexed ${{posts.length}} posts`)
}}

main().catch((e) => {{ console.error(e); process.exit(1) }})
"""
    add("algolia-admin-key-indexer", "secret", "ts", "scripts/algolia-index.ts", t, k)


def c_recaptcha_secret():
    k = "6L" + mixed(38, URLSAFE)
    t = f"""import type {{ Request, Response, NextFunction }} from 'express'

const RECAPTCHA_SECRET = '{k}'

export async function verifyCaptcha(req: Request, res: Response, next: NextFunction) {{
  const token = req.body['g-recaptcha-response']
  const r = await fetch('https://www.google.com/recaptcha/api/siteverify', {{
    method: 'POST',
    body: new URLSearchParams({{ secret: RECAPTCHA_SECRET, response: token }}),
  }})
  const data = (await r.json()) as {{ success: boolean; score?: number }}
  if (!data.success || (data.score ?? 0) < 0.5) return res.status(403).json({{ error: 'captcha' }})
  next()
}}
"""
    add("recaptcha-secret-middleware", "secret", "ts", "src/middleware/captcha.ts", t, k)


def c_posthog_personal():
    k = posthog_personal()
    t = f"""// scripts/export-events.js — pulls raw events for the weekly report
const PROJECT_ID = {R.randint(10000, 99999)}
const POSTHOG_PERSONAL_API_KEY = '{k}'

async function run() {{
  const url = `https://app.posthog.com/api/projects/${{PROJECT_ID}}/events/?limit=500`
  const res = await fetch(url, {{ headers: {{ Authorization: `Bearer ${{POSTHOG_PERSONAL_API_KEY}}` }} }})
  const json = await res.json()
  console.log(JSON.stringify(json.results.length))
}}

run()
"""
    add("posthog-personal-api-key", "secret", "js", "scripts/export-events.js", t, k)


def c_launchdarkly_server():
    k = ld_server()
    t = f"""import * as ld from '@launchdarkly/node-server-sdk';

const client = ld.init('{k}');

export async function isEnabled(flag: string, userKey: string): Promise<boolean> {{
  await client.waitForInitialization({{ timeout: 5 }});
  return client.variation(flag, {{ kind: 'user', key: userKey }}, false);
}}
"""
    add("launchdarkly-server-sdk-key", "secret", "ts", "src/flags/server.ts", t, k)


def c_eas_json_token():
    k = mixed(40, URLSAFE)
    t = json.dumps({
        "cli": {"version": ">= 7.0.0"},
        "build": {
            "development": {"developmentClient": True, "distribution": "internal"},
            "preview": {"distribution": "internal", "channel": "preview"},
            "production": {"channel": "production", "autoIncrement": True,
                           "env": {"EXPO_TOKEN": k, "APP_VARIANT": "production"}},
        },
        "submit": {"production": {}},
    }, indent=2) + "\n"
    add("eas-json-expo-token", "secret", "json", "eas.json", t, k)


def c_expo_app_config_sentry_auth():
    k = "sntrys_" + b64u(json.dumps({"iat": R.randint(1700000000, 1730000000), "url": "https://sentry.io", "region_url": "https://us.sentry.io", "org": word()}, separators=(",", ":")).encode()) + "_" + mixed(43, URLSAFE)
    t = f"""import {{ ExpoConfig, ConfigContext }} from 'expo/config';

export default ({{ config }}: ConfigContext): ExpoConfig => ({{
  ...config,
  name: '{word().title()}',
  slug: '{name()}',
  version: '1.{R.randint(0,9)}.{R.randint(0,20)}',
  ios: {{ bundleIdentifier: 'com.{word()}.app' }},
  plugins: [
    [
      '@sentry/react-native/expo',
      {{
        organization: '{word()}',
        project: 'mobile',
        authToken: '{k}',
      }},
    ],
  ],
}});
"""
    add("expo-config-sentry-auth-token", "secret", "ts", "app.config.ts", t, k)


def c_vite_define_key():
    k = google_api()
    t = f"""import {{ defineConfig }} from 'vite'
import react from '@vitejs/plugin-react'

// Server-side geocoding proxy key (restricted to server IPs) - used by the SSR build only
export default defineConfig(({{ mode }}) => ({{
  plugins: [react()],
  define: {{
    __GEOCODE_SERVER_KEY__: JSON.stringify('{k}'),
    __APP_VERSION__: JSON.stringify(process.env.npm_package_version),
  }},
  server: {{ port: 5173 }},
}}))
"""
    add("vite-define-google-api-key", "secret", "ts", "vite.config.ts", t, k)


def c_jsonwebtoken_sign():
    s = mixed(R.choice([32, 44, 64]), AN + "+/")
    t = f"""const jwt = require("jsonwebtoken");

function issueToken(user) {{
  return jwt.sign(
    {{ sub: user.id, role: user.role }},
    "{s}",
    {{ algorithm: "HS256", expiresIn: "7d", issuer: "{word()}-api" }}
  );
}}

function verifyToken(token) {{
  return jwt.verify(token, "{s}", {{ algorithms: ["HS256"] }});
}}

module.exports = {{ issueToken, verifyToken }};
"""
    add("jsonwebtoken-inline-hs256-secret", "secret", "js", "src/auth/token.js", t, s)


def c_jose_private_pem():
    k = pem_key()
    t = f"""import {{ importPKCS8, SignJWT }} from 'jose'

const PRIVATE_KEY = `{k}`

export async function signServiceToken(aud: string) {{
  const key = await importPKCS8(PRIVATE_KEY, 'RS256')
  return new SignJWT({{ scope: 'internal' }})
    .setProtectedHeader({{ alg: 'RS256', kid: '{hx(8)}' }})
    .setAudience(aud)
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(key)
}}
"""
    add("jose-inline-rsa-private-key", "secret", "ts", "src/lib/service-token.ts", t, k.splitlines()[3])


def c_atob_obfuscated():
    k = ghp()
    enc = base64.b64encode(k.encode()).decode()
    t = f"""// don't commit plain tokens, github scanners eat them
const t = atob('{enc}')

export async function openIssue(title: string, body: string) {{
  return fetch('https://api.github.com/repos/{word()}/{name()}/issues', {{
    method: 'POST',
    headers: {{ Authorization: `token ${{t}}`, Accept: 'application/vnd.github+json' }},
    body: JSON.stringify({{ title, body }}),
  }})
}}
"""
    add("atob-base64-github-token", "secret", "ts", "src/bot/issues.ts", t, enc)


def c_fromcharcode():
    k = npm_tok() if R.random() < 0.5 else stripe_sk()
    codes = ", ".join(str(ord(c)) for c in k)
    fn = pick("k", "getKey", "_0x" + hx(4))
    t = f"""/* eslint-disable */
// generated by obfuscator.io-lite, do not edit
function {fn}() {{
  return String.fromCharCode(...[{codes}]);
}}
module.exports = {{ headers: () => ({{ authorization: 'Bearer ' + {fn}() }}) }};
"""
    # one array, one credential
    add("fromcharcode-array-token", "secret", "js", f"lib/{pick('k','util','x')}.js", t, codes)


def c_split_join():
    k = sendgrid() if R.random() < 0.5 else slack_bot()
    n = 4
    step = -(-len(k) // n)
    parts = [k[i:i + step] for i in range(0, len(k), step)]
    arr = ", ".join("'%s'" % p for p in parts)
    t = f"""const parts = [{arr}];
const API_KEY = parts.join('');

export function client() {{
  return {{ headers: {{ Authorization: 'Bearer ' + API_KEY }} }};
}}
"""
    add("array-join-split-token", "secret", "js", f"src/{pick('notify','mail','hooks')}.js", t, arr)


def c_buffer_hex():
    k = openai_key()
    h = k.encode().hex()
    t = f"""import {{ Buffer }} from 'node:buffer'

const OPENAI_KEY = Buffer.from('{h}', 'hex').toString('utf8')

export const headers = {{
  Authorization: `Bearer ${{OPENAI_KEY}}`,
  'Content-Type': 'application/json',
}}
"""
    add("buffer-from-hex-openai-key", "secret", "ts", "src/lib/openai-headers.ts", t, h)


def c_template_literal_concat():
    k = stripe_sk()
    pre, rest = k[:8], k[8:]
    mid = len(rest) // 2
    a, b = rest[:mid], rest[mid:]
    t = f"""const mode = 'live'
const p1 = '{a}'
const p2 = '{b}'
export const STRIPE_KEY = `sk_${{mode}}_${{p1}}${{p2}}`

export const stripeHeaders = () => ({{ Authorization: `Bearer ${{STRIPE_KEY}}` }})
"""
    add("template-literal-assembled-stripe", "secret", "ts", "src/payments/key.ts", t, a + "'\nconst p2 = '" + b)


def c_jest_setup_real_key():
    k = anthropic_key() if R.random() < 0.5 else openai_key()
    t = f"""// jest.setup.ts
import '@testing-library/jest-dom'

// integration suite hits the real API; key from the team vault
process.env.LLM_API_KEY = process.env.LLM_API_KEY ?? '{k}'

jest.setTimeout(30_000)
"""
    add("jest-setup-real-llm-key", "secret", "ts", "jest.setup.ts", t, k)


def c_playwright_storage_state():
    tok = jwt({"sub": uuid4(), "email": f"qa@{word()}.com", "role": "admin", "exp": R.randint(2000000000, 2100000000)})
    t = json.dumps({
        "cookies": [{"name": "__Secure-session", "value": tok, "domain": f"app.{word()}.com", "path": "/",
                     "expires": R.randint(1800000000, 1900000000), "httpOnly": True, "secure": True, "sameSite": "Lax"}],
        "origins": [],
    }, indent=2) + "\n"
    add("playwright-storage-state-session", "secret", "json", "e2e/.auth/admin.json", t, tok)


def c_bunfig_token():
    k = npm_tok()
    t = f"""[install]
exact = true

[install.scopes]
"@{word()}" = {{ token = "{k}", url = "https://registry.npmjs.org/" }}

[test]
coverage = true
"""
    add("bunfig-scoped-registry-token", "secret", "toml", "bunfig.toml", t, k)


def c_deno_telegram():
    k = telegram_bot()
    t = f"""import {{ Bot }} from "https://deno.land/x/grammy@v1.21.1/mod.ts";

const bot = new Bot("{k}");

bot.command("start", (ctx) => ctx.reply("Welcome! Send /status."));
bot.command("status", async (ctx) => {{
  const kv = await Deno.openKv();
  const last = await kv.get(["last_run"]);
  await ctx.reply(`last run: ${{last.value ?? "never"}}`);
}});

bot.start();
"""
    add("deno-grammy-telegram-token", "secret", "ts", "bot/main.ts", t, k)


def c_netlify_fn_discord():
    h = discord_hook()
    t = f"""import type {{ Handler }} from '@netlify/functions'

const hook = '{h}'

export const handler: Handler = async (event) => {{
  const {{ name, email, message }} = JSON.parse(event.body || '{{}}')
  await fetch(hook, {{
    method: 'POST',
    headers: {{ 'Content-Type': 'application/json' }},
    body: JSON.stringify({{ content: `**${{name}}** <${{email}}>\\n${{message}}` }}),
  }})
  return {{ statusCode: 204 }}
}}
"""
    add("netlify-function-discord-webhook", "secret", "ts", "netlify/functions/contact.ts", t, h)


def c_vercel_env_pull():
    k = gh_fine()
    t = f"""# Created by Vercel CLI
NX_DAEMON="false"
TURBO_REMOTE_ONLY="true"
VERCEL="1"
VERCEL_ENV="development"
GITHUB_TOKEN="{k}"
NEXT_PUBLIC_POSTHOG_HOST="https://eu.posthog.com"
"""
    add("vercel-env-pull-github-fine-pat", "secret", "env", ".env.development.local", t, k)


def c_sequelize_config_json():
    pw = password()
    t = json.dumps({
        "development": {"username": "root", "password": None, "database": f"{word()}_dev", "host": "127.0.0.1", "dialect": "postgres"},
        "test": {"username": "root", "password": None, "database": f"{word()}_test", "host": "127.0.0.1", "dialect": "postgres"},
        "production": {"username": "deploy", "password": pw, "database": f"{word()}_prod", "host": f"{word()}.cluster-{hx(12)}.us-east-1.rds.amazonaws.com", "dialect": "postgres"},
    }, indent=2) + "\n"
    add("sequelize-config-json-prod-password", "secret", "json", "config/config.json", t, pw)


def c_drizzle_config():
    pw = password()
    url = pg_url(pw)
    t = f"""import type {{ Config }} from 'drizzle-kit'

export default {{
  schema: './src/db/schema.ts',
  out: './drizzle',
  dialect: 'postgresql',
  dbCredentials: {{
    url: process.env.DATABASE_URL || '{url}',
  }},
  strict: true,
}} satisfies Config
"""
    add("drizzle-config-fallback-url", "secret", "ts", "drizzle.config.ts", t, pw)


def c_apollo_graphos_key():
    k = "service:%s-graph:%s" % (word(), mixed(22, URLSAFE))
    t = f"""import {{ ApolloServer }} from '@apollo/server'
import {{ ApolloServerPluginUsageReporting }} from '@apollo/server/plugin/usageReporting'
import {{ typeDefs, resolvers }} from './schema'

export const server = new ApolloServer({{
  typeDefs,
  resolvers,
  apollo: {{
    key: '{k}',
    graphRef: '{word()}-graph@current',
  }},
  plugins: [ApolloServerPluginUsageReporting({{ sendVariableValues: {{ none: true }} }})],
}})
"""
    add("apollo-graphos-api-key", "secret", "ts", "src/server.ts", t, k)


def c_mixpanel_secret():
    s = hx(32)
    t = f"""// Mixpanel export API uses the project *secret* (basic auth), not the token
const MIXPANEL_API_SECRET = '{s}';
const auth = Buffer.from(MIXPANEL_API_SECRET + ':').toString('base64');

export async function exportDay(day) {{
  const url = `https://data.mixpanel.com/api/2.0/export?from_date=${{day}}&to_date=${{day}}`;
  const res = await fetch(url, {{ headers: {{ Authorization: `Basic ${{auth}}` }} }});
  return res.text();
}}
"""
    add("mixpanel-api-secret-export", "secret", "mjs", "scripts/mixpanel-export.mjs", t, s)


def c_trpc_context_internal():
    s = mixed(48, URLSAFE)
    t = f"""import {{ initTRPC, TRPCError }} from '@trpc/server';
import type {{ CreateNextContextOptions }} from '@trpc/server/adapters/next';

const INTERNAL_API_SECRET = '{s}';

export const createContext = ({{ req }}: CreateNextContextOptions) => ({{
  isInternal: req.headers['x-internal-secret'] === INTERNAL_API_SECRET,
}});

const t = initTRPC.context<typeof createContext>().create();
export const router = t.router;
export const internalProcedure = t.procedure.use(({{ ctx, next }}) => {{
  if (!ctx.isInternal) throw new TRPCError({{ code: 'UNAUTHORIZED' }});
  return next();
}});
"""
    add("trpc-internal-shared-secret", "secret", "ts", "src/server/trpc.ts", t, s)


def c_github_actions_in_pkgjson():
    k = ghp()
    t = json.dumps({
        "name": name(), "version": f"0.{R.randint(1,30)}.0", "private": True,
        "scripts": {
            "dev": "next dev", "build": "next build", "lint": "next lint",
            "release": f"GH_TOKEN={k} semantic-release --no-ci",
        },
        "dependencies": {"next": "14.2.5", "react": "18.3.1", "react-dom": "18.3.1"},
        "devDependencies": {"semantic-release": "^24.0.0", "typescript": "^5.5.4"},
    }, indent=2) + "\n"
    add("package-json-script-inline-token", "secret", "json", "package.json", t, k)


# ================================================================= NONE classes
def n_env_reference():
    t = f"""import Stripe from 'stripe'

if (!process.env.STRIPE_SECRET_KEY) {{
  throw new Error('STRIPE_SECRET_KEY is not set')
}}

export const stripe = new Stripe(process.env.STRIPE_SECRET_KEY, {{
  apiVersion: '2024-06-20',
  appInfo: {{ name: '{name()}' }},
}})

export const webhookSecret = process.env.STRIPE_WEBHOOK_SECRET!
"""
    add("process-env-reference-stripe", "none", "ts", "src/lib/stripe.ts", t)


def n_import_meta_env():
    t = f"""/// <reference types="vite/client" />

interface ImportMetaEnv {{
  readonly VITE_API_URL: string
  readonly VITE_SUPABASE_ANON_KEY: string
  readonly VITE_SENTRY_DSN?: string
}}

interface ImportMeta {{
  readonly env: ImportMetaEnv
}}

export const apiUrl = import.meta.env.VITE_API_URL ?? 'http://localhost:{R.choice([8000, 8787, 3001])}'
export const anonKey = import.meta.env.VITE_SUPABASE_ANON_KEY
"""
    add("import-meta-env-typing", "none", "ts", "src/env.d.ts", t)


def n_env_example():
    t = f"""# Copy to .env.local and fill in. Never commit the real file.
DATABASE_URL="postgresql://USER:PASSWORD@localhost:5432/{word()}?schema=public"
NEXTAUTH_URL=http://localhost:3000
NEXTAUTH_SECRET=  # openssl rand -base64 32
GITHUB_ID=
GITHUB_SECRET=
STRIPE_SECRET_KEY=sk_live_...
OPENAI_API_KEY=<your-openai-key>
RESEND_API_KEY=re_xxxxxxxxxxxxxxxxxxxxxxxx
"""
    add("env-example-placeholders", "none", "example", pick(".env.example", "apps/web/.env.example"), t)


def n_lockfile_integrity():
    pkgs = []
    for _ in range(R.randint(4, 7)):
        nm = pick("react", "scheduler", "loose-envify", "js-tokens", "nanoid", "picocolors", "postcss", "source-map-js", "zod", "clsx", "tslib", "semver")
        ver = f"{R.randint(0,18)}.{R.randint(0,9)}.{R.randint(0,12)}"
        pkgs.append((nm, ver))
    body = {"name": name(), "version": "1.0.0", "lockfileVersion": 3, "requires": True, "packages": {}}
    for nm, ver in pkgs:
        body["packages"][f"node_modules/{nm}"] = {
            "version": ver, "resolved": f"https://registry.npmjs.org/{nm}/-/{nm}-{ver}.tgz",
            "integrity": sha512_integrity(), "license": "MIT"}
    add("package-lock-integrity-sha512", "none", "json", "package-lock.json", json.dumps(body, indent=2) + "\n")


def n_yarn_lock():
    out = ["# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.", "# yarn lockfile v1", ""]
    for _ in range(R.randint(3, 6)):
        nm = pick("@babel/code-frame", "ansi-styles", "chalk", "debug", "ms", "esbuild", "acorn", "uuid", "lru-cache")
        ver = f"{R.randint(1,9)}.{R.randint(0,20)}.{R.randint(0,9)}"
        out += [f'"{nm}@^{ver}":', f'  version "{ver}"',
                f'  resolved "https://registry.yarnpkg.com/{nm}/-/{nm.split("/")[-1]}-{ver}.tgz#{sha1()}"',
                f'  integrity {sha512_integrity()}', ""]
    add("yarn-lock-resolved-hash", "none", "lock", "yarn.lock", "\n".join(out))


def n_pnpm_lock():
    out = ["lockfileVersion: '9.0'", "", "settings:", "  autoInstallPeers: true", "", "packages:", ""]
    for _ in range(R.randint(3, 6)):
        nm = pick("vite", "rollup", "tsx", "typescript", "vitest", "esbuild", "magic-string")
        ver = f"{R.randint(1,6)}.{R.randint(0,20)}.{R.randint(0,9)}"
        out += [f"  {nm}@{ver}:", f"    resolution: {{integrity: {sha512_integrity()}}}", "    engines: {node: '>=18'}", ""]
    add("pnpm-lock-resolution-integrity", "none", "yaml", "pnpm-lock.yaml", "\n".join(out))


def n_sentry_dsn():
    dsn = "https://%s@o%d.ingest.sentry.io/%d" % (hx(32), R.randint(100000, 4999999), R.randint(1000000, 4999999))
    t = f"""import * as Sentry from '@sentry/nextjs'

// The DSN is public by design; it only allows sending events.
Sentry.init({{
  dsn: '{dsn}',
  tracesSampleRate: {R.choice(['0.1', '0.2', '1.0'])},
  replaysOnErrorSampleRate: 1.0,
  integrations: [Sentry.replayIntegration()],
}})
"""
    add("sentry-dsn-client-config", "none", "ts", "sentry.client.config.ts", t)


def n_stripe_publishable():
    k = stripe_pk()
    t = f"""import {{ loadStripe }} from '@stripe/stripe-js'

// publishable key: safe to ship to the browser
export const stripePromise = loadStripe('{k}')
"""
    add("stripe-publishable-key-client", "none", "ts", "src/lib/stripe-client.ts", t)


def n_supabase_anon():
    ref = rs(LO, 20)
    k = jwt({"iss": "supabase", "ref": ref, "role": "anon", "iat": R.randint(1690000000, 1720000000), "exp": R.randint(2000000000, 2100000000)})
    t = f"""import {{ createBrowserClient }} from '@supabase/ssr'

// anon key is public; RLS protects the data
export const supabase = createBrowserClient(
  'https://{ref}.supabase.co',
  '{k}',
)
"""
    add("supabase-anon-key-browser", "none", "ts", "src/lib/supabase/client.ts", t)


def n_algolia_search_only():
    t = f"""import {{ liteClient as algoliasearch }} from 'algoliasearch/lite'
import {{ InstantSearch, SearchBox, Hits }} from 'react-instantsearch'

// search-only API key, safe in the browser
const searchClient = algoliasearch('{rs(UP + DG, 10)}', '{hx(32)}')

export function DocsSearch() {{
  return (
    <InstantSearch searchClient={{searchClient}} indexName="{word()}_docs">
      <SearchBox placeholder="Search docs" />
      <Hits />
    </InstantSearch>
  )
}}
"""
    add("algolia-search-only-key-component", "none", "tsx", "src/components/DocsSearch.tsx", t)


def n_mapbox_public():
    k = mapbox("pk", word() + str(R.randint(1, 99)))
    t = f"""import mapboxgl from 'mapbox-gl'
import {{ useEffect, useRef }} from 'react'

mapboxgl.accessToken = '{k}'

export default function StoreMap({{ center }}: {{ center: [number, number] }}) {{
  const ref = useRef<HTMLDivElement>(null)
  useEffect(() => {{
    const map = new mapboxgl.Map({{ container: ref.current!, style: 'mapbox://styles/mapbox/streets-v12', center, zoom: 12 }})
    return () => map.remove()
  }}, [center])
  return <div ref={{ref}} className="h-96 w-full" />
}}
"""
    add("mapbox-public-pk-token", "none", "tsx", "components/StoreMap.tsx", t)


def n_recaptcha_site():
    k = "6L" + mixed(38, URLSAFE)
    t = f"""<script setup lang="ts">
import {{ VueRecaptcha }} from 'vue-recaptcha'
const siteKey = '{k}' // site key (public)
const emit = defineEmits<{{ (e: 'verified', token: string): void }}>()
</script>

<template>
  <VueRecaptcha :sitekey="siteKey" @verify="(t) => emit('verified', t)" />
</template>
"""
    add("recaptcha-site-key-vue", "none", "vue", "components/Captcha.vue", t)


def n_posthog_project():
    k = posthog_project()
    t = f"""'use client'
import posthog from 'posthog-js'
import {{ PostHogProvider }} from 'posthog-js/react'

if (typeof window !== 'undefined') {{
  posthog.init('{k}', {{
    api_host: 'https://eu.i.posthog.com',
    person_profiles: 'identified_only',
  }})
}}

export function PHProvider({{ children }}: {{ children: React.ReactNode }}) {{
  return <PostHogProvider client={{posthog}}>{{children}}</PostHogProvider>
}}
"""
    add("posthog-project-key-client", "none", "tsx", "app/providers.tsx", t)


def n_segment_write_key():
    k = mixed(32)
    t = f"""import {{ AnalyticsBrowser }} from '@segment/analytics-next'

// write key is embedded in every page load of the marketing site
export const analytics = AnalyticsBrowser.load({{ writeKey: '{k}' }})

export function trackSignup(plan: string) {{
  analytics.track('Signed Up', {{ plan }})
}}
"""
    add("segment-browser-write-key", "none", "ts", "src/analytics.ts", t)


def n_ld_client_side_id():
    t = f"""import {{ asyncWithLDProvider }} from 'launchdarkly-react-client-sdk'

export async function withFlags(App: React.ComponentType) {{
  return asyncWithLDProvider({{
    clientSideID: '{hx(24)}',
    context: {{ kind: 'user', anonymous: true, key: 'anon' }},
    options: {{ bootstrap: 'localStorage' }},
  }})
}}
"""
    add("launchdarkly-client-side-id", "none", "tsx", "src/flags/client.tsx", t)


def n_firebase_json():
    t = json.dumps({
        "hosting": {"public": "dist", "ignore": ["firebase.json", "**/.*", "**/node_modules/**"],
                    "rewrites": [{"source": "/api/**", "function": "api"}, {"source": "**", "destination": "/index.html"}],
                    "headers": [{"source": "**/*.@(js|css)", "headers": [{"key": "Cache-Control", "value": "max-age=31536000"}]}]},
        "functions": [{"source": "functions", "codebase": "default", "predeploy": ["npm --prefix \"$RESOURCE_DIR\" run build"]}],
        "firestore": {"rules": "firestore.rules", "indexes": "firestore.indexes.json"},
        "emulators": {"auth": {"port": 9099}, "firestore": {"port": 8080}, "ui": {"enabled": True}},
    }, indent=2) + "\n"
    add("firebase-json-hosting-config", "none", "json", "firebase.json", t)


def n_prisma_schema():
    t = f"""generator client {{
  provider = "prisma-client-js"
}}

datasource db {{
  provider  = "postgresql"
  url       = env("DATABASE_URL")
  directUrl = env("DIRECT_URL")
}}

model User {{
  id            String    @id @default(cuid())
  email         String    @unique
  passwordHash  String
  apiKey        String?   @unique @default(uuid())
  sessions      Session[]
  createdAt     DateTime  @default(now())
}}

model Session {{
  id           String   @id @default(cuid())
  sessionToken String   @unique
  userId       String
  expires      DateTime
  user         User     @relation(fields: [userId], references: [id], onDelete: Cascade)
}}
"""
    add("prisma-schema-env-url", "none", "prisma", "prisma/schema.prisma", t)


def n_prisma_seed_hashes():
    rows = []
    for _ in range(R.randint(2, 4)):
        salt = "".join(R.choice("./" + AN) for _ in range(22))
        h = "$2b$10$" + salt + "".join(R.choice("./" + AN) for _ in range(31))
        SEEN.add(h)
        rows.append(f"    {{ email: '{word()}{R.randint(1,99)}@example.com', passwordHash: '{h}', id: 'c{rs(LO + DG, 24)}' }},")
    rows_s = "\n".join(rows)
    t = f"""import {{ PrismaClient }} from '@prisma/client'

const prisma = new PrismaClient()

async function main() {{
  // bcrypt hashes of throwaway dev passwords (see README: password is "password")
  await prisma.user.createMany({{
    data: [
{rows_s}
    ],
    skipDuplicates: true,
  }})
}}

main().finally(() => prisma.$disconnect())
"""
    add("prisma-seed-bcrypt-hashes", "none", "ts", "prisma/seed.ts", t)


def n_jest_snapshot():
    t = f"""// Jest Snapshot v1, https://goo.gl/fbAQLP

exports[`ApiKeyCard renders masked key 1`] = `
<div
  className="card"
  data-testid="api-key-card"
>
  <code>
    sk_live_••••••••••••{rs(AN, 4)}
  </code>
  <span
    className="css-{rs(LO + DG, 6)}"
  >
    Created 2024-0{R.randint(1,9)}-1{R.randint(0,9)}
  </span>
  <button
    aria-label="Rotate key"
    id="btn-{uuid4()}"
  >
    Rotate
  </button>
</div>
`;
"""
    add("jest-snapshot-masked-key", "none", "snap", "src/components/__snapshots__/ApiKeyCard.test.tsx.snap", t)


def n_vitest_fake_token():
    t = f"""import {{ describe, expect, it }} from 'vitest'
import {{ redact }} from '../src/redact'

describe('redact', () => {{
  it('masks bearer tokens', () => {{
    const input = 'Authorization: Bearer FAKE-TOKEN-FOR-TESTS'
    expect(redact(input)).toBe('Authorization: Bearer [REDACTED]')
  }})

  it('masks stripe-like keys', () => {{
    expect(redact('key=sk_live_EXAMPLE{word().upper()}KEY')).toBe('key=[REDACTED]')
  }})

  it('leaves ids alone', () => {{
    expect(redact('order {uuid4()}')).toContain('order ')
  }})
}})
"""
    add("vitest-redaction-fake-values", "none", "ts", "test/redact.test.ts", t)


def n_msw_handlers():
    t = f"""import {{ http, HttpResponse }} from 'msw'

export const handlers = [
  http.post('https://api.{word()}.com/oauth/token', () =>
    HttpResponse.json({{
      access_token: 'mock-access-token',
      refresh_token: 'mock-refresh-token',
      token_type: 'Bearer',
      expires_in: 3600,
    }}),
  ),
  http.get('https://api.{word()}.com/me', ({{ request }}) => {{
    if (request.headers.get('authorization') !== 'Bearer mock-access-token') {{
      return new HttpResponse(null, {{ status: 401 }})
    }}
    return HttpResponse.json({{ id: '{uuid4()}', name: 'Test User' }})
  }}),
]
"""
    add("msw-handlers-mock-tokens", "none", "ts", "src/mocks/handlers.ts", t)


def n_cypress_fixture():
    t = json.dumps({
        "user": {"id": uuid4(), "email": "cypress@example.test", "password": "e2e-%s-password-%d" % (word(), R.randint(1, 99))},
        "session": {"token": "test-session-token", "csrf": "csrf-test-value"},
        "org": {"id": "org_" + hx(16), "plan": "pro"},
    }, indent=2) + "\n"
    add("cypress-fixture-test-user", "none", "json", "cypress/fixtures/user.json", t)


def n_hmac_test_vector():
    key = "".join(R.choice(LO) for _ in range(8))
    msg = "payload-" + str(R.randint(1000, 9999))
    dig = hmac.new(key.encode(), msg.encode(), hashlib.sha256).hexdigest()
    t = f"""import {{ createHmac }} from 'node:crypto'
import {{ test }} from 'node:test'
import assert from 'node:assert/strict'
import {{ verifySignature }} from '../src/webhooks.js'

test('accepts a valid signature', () => {{
  const secret = 'test-secret-{key}'
  const body = '{msg}'
  const sig = createHmac('sha256', secret).update(body).digest('hex')
  assert.equal(verifySignature(body, sig, secret), true)
}})

test('known digest', () => {{
  assert.equal(createHmac('sha256', '{key}').update('{msg}').digest('hex'), '{dig}')
}})
"""
    add("hmac-sha256-test-vector", "none", "mjs", "test/webhooks.test.mjs", t)


def n_webcrypto_ciphertext():
    iv = base64.b64encode(bytes(R.getrandbits(8) for _ in range(12))).decode()
    ct = base64.b64encode(bytes(R.getrandbits(8) for _ in range(R.randint(48, 96)))).decode()
    t = f"""// Encrypted blob produced by `pnpm vault:encrypt` (AES-GCM, key from KMS at runtime)
export const ENCRYPTED_CONFIG = {{
  alg: 'AES-GCM',
  iv: '{iv}',
  ciphertext: '{ct}',
}}

export async function decryptConfig(key: CryptoKey) {{
  const iv = Uint8Array.from(atob(ENCRYPTED_CONFIG.iv), (c) => c.charCodeAt(0))
  const data = Uint8Array.from(atob(ENCRYPTED_CONFIG.ciphertext), (c) => c.charCodeAt(0))
  const plain = await crypto.subtle.decrypt({{ name: 'AES-GCM', iv }}, key, data)
  return JSON.parse(new TextDecoder().decode(plain))
}}
"""
    add("webcrypto-aes-gcm-ciphertext", "none", "ts", "src/config/encrypted.ts", t)


def n_data_uri_png():
    b = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(R.getrandbits(8) for _ in range(R.randint(90, 160)))).decode()
    t = f"""export const placeholderBlur =
  'data:image/png;base64,{b}'

export function Avatar({{ src }}: {{ src?: string }}) {{
  return <img src={{src ?? placeholderBlur}} alt="" width={{40}} height={{40}} />
}}
"""
    add("base64-data-uri-image", "none", "tsx", "src/components/Avatar.tsx", t)


def n_svg_paths():
    def path():
        return "M" + " ".join("%d.%d %d.%d" % (R.randint(0, 24), R.randint(0, 99), R.randint(0, 24), R.randint(0, 99)) for _ in range(8)) + "Z"
    t = f"""<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" id="icon-{hx(8)}">
  <defs>
    <linearGradient id="g{hx(6)}" x1="0" x2="1"><stop offset="0" stop-color="#{hx(6)}"/><stop offset="1" stop-color="#{hx(6)}"/></linearGradient>
  </defs>
  <path d="{path()}"/>
  <path d="{path()}"/>
</svg>
"""
    add("svg-icon-paths", "none", "svg", f"public/icons/{pick('key','lock','shield')}.svg", t)


def n_nanoid_source():
    alphabet = "useandom-26T198340PX75pxJACKVERYMINDBUSHWOLF_GQZbfghjklqvwyzrict"
    t = f"""// Vendored from nanoid (MIT) — URL-friendly symbol set
export const urlAlphabet =
  '{alphabet}'

export const nanoid = (size = 21) => {{
  let id = ''
  const bytes = crypto.getRandomValues(new Uint8Array(size))
  while (size--) id += urlAlphabet[bytes[size] & 63]
  return id
}}

// examples of generated ids: {rs(URLSAFE, 21)}, {rs(URLSAFE, 21)}
"""
    add("nanoid-alphabet-vendored", "none", "js", "src/vendor/nanoid.js", t)


def n_uuid_constants():
    lines = "\n".join(f"  {pick('ORDERS','USERS','BILLING','AUDIT','EVENTS','ASSETS','SEARCH')}_{i}: '{uuid4()}'," for i in range(R.randint(4, 7)))
    t = f"""// Namespace UUIDs for uuid.v5 — stable across deployments, not secrets
export const NAMESPACES = {{
{lines}
}} as const
"""
    add("uuid-v5-namespace-constants", "none", "ts", "src/lib/namespaces.ts", t)


def n_csp_hashes():
    hs = ["'sha256-%s'" % base64.b64encode(bytes(R.getrandbits(8) for _ in range(32))).decode() for _ in range(R.randint(2, 4))]
    t = f"""const ContentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self' {' '.join(hs)}",
  "img-src 'self' data: https://images.{word()}.com",
  "connect-src 'self' https://*.ingest.sentry.io",
].join('; ')

module.exports = {{
  async headers() {{
    return [{{ source: '/(.*)', headers: [{{ key: 'Content-Security-Policy', value: ContentSecurityPolicy }}] }}]
  }},
}}
"""
    add("next-config-csp-script-hashes", "none", "js", "next.config.js", t)


def n_i18n_json():
    t = json.dumps({
        "auth": {"password": "Password", "passwordHint": "At least 12 characters", "forgotPassword": "Forgot your password?",
                 "apiKey": "API key", "apiKeyCreated": "Your new API key: {{key}}", "secret": "Secret"},
        "settings": {"token": "Access token", "regenerate": "Regenerate", "copy": "Copy to clipboard"},
    }, indent=2, ensure_ascii=False) + "\n"
    add("i18n-json-credential-words", "none", "json", f"locales/{pick('en','en-US','en-GB')}/common.json", t)


def n_i18n_de():
    t = json.dumps({
        "login": {"passwort": "Passwort", "geheimnis": "Geheimer Schlüssel", "token": "Zugangstoken",
                  "fehler": "Ungültiges Passwort oder Token"},
        "billing": {"stripeKey": "Stripe-Schlüssel (beginnt mit sk_live_)"},
    }, indent=2, ensure_ascii=False) + "\n"
    add("i18n-json-german-labels", "none", "json", "messages/de.json", t)


def n_webpack_contenthash():
    files = "\n".join(f'  "{pick("main","vendors","runtime","app","polyfills")}.{hx(20)}.js": "/static/js/{hx(8)}.js",' for _ in range(R.randint(3, 6)))
    t = "{\n" + files.rstrip(",") + "\n}\n"
    add("webpack-asset-manifest-hashes", "none", "json", "build/asset-manifest.json", t)


def n_git_shas_changelog():
    lines = [f"# Changelog", "", f"## {R.randint(1,4)}.{R.randint(0,20)}.{R.randint(0,9)}", ""]
    for _ in range(R.randint(4, 7)):
        s = sha1()
        lines.append(f"- {pick('fix','feat','chore','perf')}: {pick('rotate session cookie','drop token from logs','bump jose','handle expired jwt','add api key scopes')} ([{s[:7]}](https://github.com/{word()}/{name()}/commit/{s}))")
    add("changelog-commit-shas", "none", "md", "CHANGELOG.md", "\n".join(lines) + "\n")


def n_redacted_logs():
    t = f"""[{R.randint(10,23)}:{R.randint(10,59)}:01.120] INFO  server listening on :3000
[..] DEBUG loaded config {{ stripe: {{ secretKey: 'sk_live_****************' }}, openai: {{ apiKey: '[REDACTED]' }} }}
[..] DEBUG request id={uuid4()} trace={hx(32)}
[..] WARN  Authorization header: Bearer <redacted>
[..] INFO  GET /api/health 200 {R.randint(1,40)}ms
"""
    add("redacted-server-log", "none", "log", "logs/dev-server.log", t)


def n_eslint_config():
    t = f"""import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import noSecrets from 'eslint-plugin-no-secrets'

export default tseslint.config(
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {{
    plugins: {{ 'no-secrets': noSecrets }},
    rules: {{
      'no-secrets/no-secrets': ['error', {{ tolerance: 4.2, ignoreContent: ['^data:image', '^sha512-'] }}],
      '@typescript-eslint/no-unused-vars': ['warn', {{ argsIgnorePattern: '^_' }}],
    }},
  }},
  {{ ignores: ['dist/**', '.next/**', 'coverage/**'] }},
)
"""
    add("eslint-flat-config-no-secrets", "none", "js", "eslint.config.js", t)


def n_tsconfig():
    t = json.dumps({"compilerOptions": {"target": "ES2022", "lib": ["dom", "dom.iterable", "esnext"], "strict": True, "module": "esnext",
                                        "moduleResolution": "bundler", "jsx": "preserve", "incremental": True, "paths": {"@/*": ["./src/*"]},
                                        "plugins": [{"name": "next"}]},
                    "include": ["next-env.d.ts", "**/*.ts", "**/*.tsx"], "exclude": ["node_modules"]}, indent=2) + "\n"
    add("tsconfig-next", "none", "json", "tsconfig.json", t)


def n_graphql_schema():
    t = f"""type Query {{
  me: User
  apiKeys: [ApiKey!]!
}}

type Mutation {{
  createApiKey(name: String!, scopes: [Scope!]!): CreatedApiKey!
  revokeApiKey(id: ID!): Boolean!
  resetPassword(token: String!, newPassword: String!): Boolean!
}}

type ApiKey {{
  id: ID!
  name: String!
  "First 8 characters, e.g. sk_live_4f"
  prefix: String!
  lastUsedAt: DateTime
}}

type CreatedApiKey {{
  apiKey: ApiKey!
  "Shown once; store it securely"
  secret: String!
}}

enum Scope {{ READ WRITE ADMIN }}
scalar DateTime
"""
    add("graphql-schema-api-key-types", "none", "graphql", "src/schema.graphql", t)


def n_resolver_generates_key():
    t = f"""import {{ randomBytes, createHash }} from 'node:crypto'
import type {{ Resolvers }} from './__generated__/types'

const PREFIX = 'sk_live_'

export const resolvers: Resolvers = {{
  Mutation: {{
    async createApiKey(_p, {{ name, scopes }}, {{ db, user }}) {{
      const secret = PREFIX + randomBytes(24).toString('base64url')
      const hash = createHash('sha256').update(secret).digest('hex')
      const apiKey = await db.apiKey.create({{ data: {{ name, scopes, hash, prefix: secret.slice(0, 10), userId: user.id }} }})
      return {{ apiKey, secret }}
    }},
  }},
}}
"""
    add("resolver-generates-api-key", "none", "ts", "src/resolvers/apiKeys.ts", t)


def n_jwt_decode_test_expired():
    # a JWT with 'none' alg and public claims only, used as a fixture: unsigned
    head = b64u(json.dumps({"alg": "none", "typ": "JWT"}).encode())
    body = b64u(json.dumps({"sub": "1234", "name": "Test", "exp": R.randint(1000000000, 1500000000)}).encode())
    tok = head + "." + body + "."
    t = f"""import {{ decodeJwt }} from 'jose'
import {{ expect, it }} from 'vitest'
import {{ isExpired }} from '../src/session'

// unsigned token (alg none) — decoding only, never verified
const EXPIRED = '{tok}'

it('detects expiry', () => {{
  expect(decodeJwt(EXPIRED).sub).toBe('1234')
  expect(isExpired(EXPIRED)).toBe(true)
}})
"""
    add("jwt-unsigned-alg-none-fixture", "none", "ts", "test/session.test.ts", t)


def n_atob_nonsecret():
    msg = pick("https://status.%s.io/api/v2/summary.json" % word(), "Welcome to %s!" % word().title(), "build-%d" % R.randint(100, 999))
    enc = base64.b64encode(msg.encode()).decode()
    t = f"""// obfuscated so crawlers don't index the status endpoint
const endpoint = atob('{enc}')

export async function status() {{
  return fetch(endpoint).then((r) => r.json())
}}
"""
    add("atob-decodes-non-secret", "none", "ts", "src/status.ts", t)


def n_fromcharcode_nonsecret():
    msg = pick("Hello, world", "console.log", "localStorage", "X-Requested-With")
    codes = ", ".join(str(ord(c)) for c in msg)
    t = f"""// anti-tamper toy from the 2019 codebase
const s = String.fromCharCode({codes});
export default s;
"""
    add("fromcharcode-non-secret", "none", "js", "src/legacy/strings.js", t)


def n_vault_ciphertext_env():
    t = f"""# Values are encrypted with dotenvx; the private key lives in the CI secret store
#/-------------------[DOTENV_PUBLIC_KEY]--------------------/
DOTENV_PUBLIC_KEY="03{hx(64)}"
DATABASE_URL="encrypted:{base64.b64encode(bytes(R.getrandbits(8) for _ in range(110))).decode()}"
STRIPE_SECRET_KEY="encrypted:{base64.b64encode(bytes(R.getrandbits(8) for _ in range(90))).decode()}"
"""
    add("dotenvx-encrypted-values", "none", "env", ".env.production", t)


def n_sops_yaml():
    def enc():
        return "ENC[AES256_GCM,data:%s,iv:%s,tag:%s,type:str]" % (
            base64.b64encode(bytes(R.getrandbits(8) for _ in range(R.randint(20, 50)))).decode(),
            base64.b64encode(bytes(R.getrandbits(8) for _ in range(32))).decode(),
            base64.b64encode(bytes(R.getrandbits(8) for _ in range(16))).decode())
    t = f"""openai_api_key: {enc()}
stripe_secret_key: {enc()}
sops:
    age:
        - recipient: age1{rs(LO + DG, 58)}
    lastmodified: "2024-0{R.randint(1,9)}-1{R.randint(0,9)}T10:11:12Z"
    mac: {enc()}
    version: 3.8.1
"""
    add("sops-encrypted-secrets-yaml", "none", "yaml", "deploy/secrets.enc.yaml", t)


def n_storybook_args():
    t = f"""import type {{ Meta, StoryObj }} from '@storybook/react'
import {{ ApiKeyInput }} from './ApiKeyInput'

const meta: Meta<typeof ApiKeyInput> = {{
  title: 'Settings/ApiKeyInput',
  component: ApiKeyInput,
  args: {{ label: 'Secret key', placeholder: 'sk_live_…' }},
}}
export default meta

type Story = StoryObj<typeof ApiKeyInput>
export const Empty: Story = {{}}
export const Filled: Story = {{ args: {{ value: 'sk_live_••••••••••••••••••••3f9a' }} }}
export const Invalid: Story = {{ args: {{ value: 'not-a-key', error: 'Key must start with sk_live_' }} }}
"""
    add("storybook-masked-key-args", "none", "tsx", "src/components/ApiKeyInput.stories.tsx", t)


def n_wrangler_bindings_only():
    t = f"""name = "{name()}"
main = "src/worker.ts"
compatibility_date = "2024-0{R.randint(1,9)}-0{R.randint(1,9)}"
account_id = "{hx(32)}"

[[d1_databases]]
binding = "DB"
database_name = "{word()}-prod"
database_id = "{uuid4()}"

[[r2_buckets]]
binding = "UPLOADS"
bucket_name = "{word()}-uploads"

# secrets are set with `wrangler secret put STRIPE_KEY`
"""
    add("wrangler-bindings-ids", "none", "toml", "wrangler.toml", t)


def n_vercel_json():
    t = json.dumps({"$schema": "https://openapi.vercel.sh/vercel.json", "framework": "nextjs",
                    "crons": [{"path": "/api/cron/cleanup", "schedule": "0 3 * * *"}],
                    "headers": [{"source": "/(.*)", "headers": [{"key": "X-Frame-Options", "value": "DENY"}]}],
                    "env": {"NEXT_PUBLIC_BUILD_ID": hx(12)}}, indent=2) + "\n"
    add("vercel-json-config", "none", "json", "vercel.json", t)


def n_netlify_toml():
    t = f"""[build]
  command = "npm run build"
  publish = "dist"

[build.environment]
  NODE_VERSION = "20"
  SECRETS_SCAN_OMIT_KEYS = "NEXT_PUBLIC_SUPABASE_ANON_KEY,ALGOLIA_SEARCH_KEY"

[[redirects]]
  from = "/api/*"
  to = "/.netlify/functions/:splat"
  status = 200
"""
    add("netlify-toml-build", "none", "toml", "netlify.toml", t)


def n_app_json_expo():
    t = json.dumps({"expo": {"name": word().title(), "slug": name(), "version": "2.0.0", "orientation": "portrait",
                             "updates": {"url": f"https://u.expo.dev/{uuid4()}"},
                             "runtimeVersion": {"policy": "appVersion"},
                             "extra": {"eas": {"projectId": uuid4()}, "apiUrl": f"https://api.{word()}.app"},
                             "android": {"package": f"com.{word()}.mobile"}}}, indent=2) + "\n"
    add("expo-app-json-project-ids", "none", "json", "app.json", t)


def n_deno_json():
    t = json.dumps({"tasks": {"dev": "deno run --watch --allow-net --allow-env main.ts", "test": "deno test -A"},
                    "imports": {"@std/assert": "jsr:@std/assert@^1.0.0", "hono": "jsr:@hono/hono@^4.5.0"},
                    "lock": True, "compilerOptions": {"strict": True}}, indent=2) + "\n"
    add("deno-json-tasks", "none", "json", "deno.json", t)


def n_deno_lock():
    remote = {f"https://deno.land/std@0.{R.randint(150,224)}.0/{p}": hx(64)
              for p in ["http/server.ts", "path/mod.ts", "fs/mod.ts", "assert/mod.ts"]}
    t = json.dumps({"version": "3", "remote": remote}, indent=2) + "\n"
    add("deno-lock-remote-hashes", "none", "json", "deno.lock", t)


def n_pkgjson_scripts_env():
    t = json.dumps({"name": name(), "private": True, "type": "module",
                    "scripts": {"dev": "vite", "build": "tsc -b && vite build",
                                "deploy": "wrangler deploy --var API_TOKEN:$API_TOKEN",
                                "release": "GH_TOKEN=$GITHUB_TOKEN semantic-release",
                                "db:push": "dotenv -e .env.local -- drizzle-kit push"},
                    "packageManager": "pnpm@9.%d.0+sha512.%s" % (R.randint(0, 12), hx(128))}, indent=2) + "\n"
    add("package-json-env-var-scripts", "none", "json", "package.json", t)


def n_npmrc_env_ref():
    t = f"""@{word()}:registry=https://npm.pkg.github.com
//npm.pkg.github.com/:_authToken=${{NODE_AUTH_TOKEN}}
//registry.npmjs.org/:_authToken=${{NPM_TOKEN}}
auto-install-peers=true
"""
    add("npmrc-env-var-token", "none", "npmrc", ".npmrc", t)


def n_passport_strategy_env():
    t = f"""import {{ Injectable }} from '@nestjs/common';
import {{ PassportStrategy }} from '@nestjs/passport';
import {{ ConfigService }} from '@nestjs/config';
import {{ Strategy, Profile }} from 'passport-github2';

@Injectable()
export class GithubStrategy extends PassportStrategy(Strategy, 'github') {{
  constructor(config: ConfigService) {{
    super({{
      clientID: config.getOrThrow<string>('GITHUB_CLIENT_ID'),
      clientSecret: config.getOrThrow<string>('GITHUB_CLIENT_SECRET'),
      callbackURL: `${{config.get('APP_URL')}}/auth/github/callback`,
      scope: ['read:user', 'user:email'],
    }});
  }}

  validate(_at: string, _rt: string, profile: Profile) {{
    return {{ githubId: profile.id, username: profile.username }};
  }}
}}
"""
    add("nestjs-passport-config-service", "none", "ts", "src/auth/github.strategy.ts", t)


def n_nest_guard():
    t = f"""import {{ CanActivate, ExecutionContext, Injectable, UnauthorizedException }} from '@nestjs/common';
import {{ timingSafeEqual, createHash }} from 'crypto';

@Injectable()
export class ApiKeyGuard implements CanActivate {{
  // sha256 of the expected key; the key itself lives in the secret manager
  private readonly expected = Buffer.from('{hashlib.sha256(os.urandom(0) + bytes(R.getrandbits(8) for _ in range(16))).hexdigest()}', 'hex');

  canActivate(ctx: ExecutionContext): boolean {{
    const key = ctx.switchToHttp().getRequest().headers['x-api-key'] ?? '';
    const got = createHash('sha256').update(String(key)).digest();
    if (!timingSafeEqual(got, this.expected)) throw new UnauthorizedException();
    return true;
  }}
}}
"""
    add("nestjs-guard-sha256-of-key", "none", "ts", "src/common/api-key.guard.ts", t)


def n_middleware_matcher():
    t = f"""import {{ NextResponse, type NextRequest }} from 'next/server'

export function middleware(req: NextRequest) {{
  const token = req.cookies.get('session')?.value
  if (!token && req.nextUrl.pathname.startsWith('/dashboard')) {{
    const url = new URL('/login', req.url)
    url.searchParams.set('next', req.nextUrl.pathname)
    return NextResponse.redirect(url)
  }}
  const res = NextResponse.next()
  res.headers.set('x-request-id', crypto.randomUUID())
  return res
}}

export const config = {{ matcher: ['/dashboard/:path*', '/api/private/:path*'] }}
"""
    add("next-middleware-cookie-check", "none", "ts", "middleware.ts", t)


def n_jwks_public():
    n = b64u(bytes(R.getrandbits(8) for _ in range(256)))
    t = json.dumps({"keys": [{"kty": "RSA", "use": "sig", "alg": "RS256", "kid": hx(16), "n": n, "e": "AQAB"}]}, indent=2) + "\n"
    add("jwks-public-rsa-key", "none", "json", "public/.well-known/jwks.json", t)


def n_public_key_pem():
    raw = bytes(R.getrandbits(8) for _ in range(270))
    b = base64.b64encode(b"\x30\x82\x01\x22\x30\x0d\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x01\x01\x05\x00" + raw).decode()
    body = "\n".join(b[i:i + 64] for i in range(0, len(b), 64))
    t = f"""import {{ importSPKI, jwtVerify }} from 'jose'

const PUBLIC_KEY = `-----BEGIN PUBLIC KEY-----
{body}
-----END PUBLIC KEY-----`

export async function verify(token: string) {{
  const key = await importSPKI(PUBLIC_KEY, 'RS256')
  return jwtVerify(token, key, {{ issuer: 'https://auth.{word()}.com' }})
}}
"""
    add("jose-spki-public-key", "none", "ts", "src/lib/verify.ts", t)


def n_cuid_ids_fixture():
    rows = ",\n".join(f"  {{ id: 'c{rs(LO + DG, 24)}', slug: '{word()}-{R.randint(1,999)}', etag: 'W/\"{hx(27)}\"' }}" for _ in range(R.randint(3, 6)))
    t = f"""// fixtures/posts.ts – ids are cuid()s from a local seed run
export const posts = [
{rows},
]
"""
    add("cuid-ids-fixture", "none", "ts", "fixtures/posts.ts", t)


def n_openai_placeholder_docs():
    t = f"""# {word().title()} AI starter

1. Copy `.env.example` to `.env.local`.
2. Set `OPENAI_API_KEY=sk-...` (create one at platform.openai.com).
3. Optionally set `ANTHROPIC_API_KEY=sk-ant-api03-XXXXXXXXXXXXXXXX`.

```ts
const client = new OpenAI({{ apiKey: process.env.OPENAI_API_KEY }})
```

> Never paste your key into client components; anything under `NEXT_PUBLIC_` is shipped to the browser.
"""
    add("readme-ai-key-placeholders", "none", "md", "README.md", t)


def n_twilio_sid_only():
    t = f"""// Twilio Verify service & messaging service identifiers (not credentials)
export const TWILIO = {{
  accountSid: 'AC{hx(32)}',
  verifyServiceSid: 'VA{hx(32)}',
  messagingServiceSid: 'MG{hx(32)}',
  authToken: process.env.TWILIO_AUTH_TOKEN,
}}
"""
    add("twilio-sids-without-token", "none", "ts", "src/config/twilio.ts", t)


def n_stripe_ids():
    t = f"""import {{ describe, it, expect }} from '@jest/globals'
import {{ priceFor }} from '../src/billing'

const PRICES = {{
  starter: 'price_{mixed(24)}',
  pro: 'price_{mixed(24)}',
}}

describe('priceFor', () => {{
  it('maps plans', () => {{
    expect(priceFor('pro')).toBe(PRICES.pro)
    expect(priceFor('starter', {{ customer: 'cus_{mixed(14)}' }})).toBe(PRICES.starter)
  }})
  it('keeps subscription ids', () => {{
    expect('sub_{mixed(24)}'.startsWith('sub_')).toBe(true)
  }})
}})
"""
    add("stripe-object-ids-test", "none", "ts", "test/billing.test.ts", t)


def n_google_oauth_client_id_only():
    cid = "%d-%s.apps.googleusercontent.com" % (R.randint(10**11, 10**12 - 1), rs(LO + DG, 32))
    t = f"""import {{ GoogleOAuthProvider, GoogleLogin }} from '@react-oauth/google'

// client id is public; the secret stays on the server
const CLIENT_ID = '{cid}'

export function LoginButton({{ onToken }}: {{ onToken: (t: string) => void }}) {{
  return (
    <GoogleOAuthProvider clientId={{CLIENT_ID}}>
      <GoogleLogin onSuccess={{(r) => r.credential && onToken(r.credential)}} />
    </GoogleOAuthProvider>
  )
}}
"""
    add("google-oauth-client-id-public", "none", "tsx", "src/components/LoginButton.tsx", t)


def n_crypto_random_gen():
    t = f"""import {{ randomBytes }} from 'node:crypto'

/** Generates a NEXTAUTH_SECRET / AUTH_SECRET value. Run: node scripts/gen-secret.mjs */
const secret = randomBytes(32).toString('base64')
console.log(`AUTH_SECRET="${{secret}}"`)
console.log('paste the line above into .env.local — do not commit it')
"""
    add("secret-generator-script", "none", "mjs", "scripts/gen-secret.mjs", t)


def n_sri_html():
    t = f"""<!doctype html>
<html lang="en">
  <head>
    <meta charset="UTF-8" />
    <title>{word().title()}</title>
    <script src="https://cdn.jsdelivr.net/npm/alpinejs@3.{R.randint(10,14)}.0/dist/cdn.min.js"
      integrity="sha384-{base64.b64encode(bytes(R.getrandbits(8) for _ in range(48))).decode()}"
      crossorigin="anonymous" defer></script>
    <link rel="stylesheet" href="/assets/index-{rs(AN, 8)}.css" />
  </head>
  <body><div id="app"></div><script type="module" src="/assets/index-{rs(AN + '-_', 8)}.js"></script></body>
</html>
"""
    add("html-sri-integrity", "none", "html", "index.html", t)


def n_graphql_codegen_hashes():
    lines = ",\n".join(f'  "{hashlib.sha256(bytes(R.getrandbits(8) for _ in range(8))).hexdigest()}": "query {pick("Me","Posts","Viewer","Cart")}{i} {{ id }}"' for i in range(R.randint(3, 5)))
    t = "{\n" + lines + "\n}\n"
    add("persisted-queries-sha256-manifest", "none", "json", "src/__generated__/persisted-documents.json", t)


def n_obvious_fake_key_test():
    t = f"""import {{ describe, it, expect }} from 'vitest'
import {{ isLikelyAwsKey }} from '../src/detect'

describe('isLikelyAwsKey', () => {{
  it('rejects short ids', () => expect(isLikelyAwsKey('AKIA123')).toBe(false))
  it('rejects placeholders', () => {{
    expect(isLikelyAwsKey('AKIAXXXXXXXXXXXXXXXX')).toBe(false)
    expect(isLikelyAwsKey('<AWS_ACCESS_KEY_ID>')).toBe(false)
  }})
}})
"""
    add("detector-test-placeholder-aws", "none", "ts", "test/detect.test.ts", t)


def n_webhook_signing_test_env():
    t = f"""import Stripe from 'stripe'

const stripe = new Stripe('sk_test_placeholder', {{ apiVersion: '2024-06-20' }})

export function constructEvent(payload: string, header: string) {{
  return stripe.webhooks.constructEvent(payload, header, process.env.STRIPE_WEBHOOK_SECRET ?? '')
}}
"""
    add("stripe-placeholder-test-key", "none", "ts", "src/webhooks/stripe.ts", t)


def n_chunk_hash_sourcemap():
    mappings = ";".join(",".join(rs("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", R.randint(4, 8)) for _ in range(R.randint(3, 7))) for _ in range(R.randint(6, 10)))
    t = json.dumps({"version": 3, "file": f"chunk-{rs(AN, 8)}.js", "sources": ["../src/main.ts", "../src/api.ts"],
                    "names": ["apiKey", "token", "fetch"], "mappings": mappings}) + "\n"
    add("sourcemap-mappings", "none", "map", f"dist/assets/chunk-{rs(AN, 8)}.js.map", t)


def n_bun_lockb_text():
    t = f"""[install]
registry = "https://registry.npmjs.org"
cache.dir = "~/.bun/install/cache"

[install.scopes]
"@{word()}" = {{ token = "$NPM_TOKEN", url = "https://npm.pkg.github.com/" }}

[run]
bun = true
"""
    add("bunfig-env-token-reference", "none", "toml", "bunfig.toml", t)


def n_expo_public_env():
    t = f"""// Expo inlines EXPO_PUBLIC_* at build time: treat as public
export const config = {{
  apiUrl: process.env.EXPO_PUBLIC_API_URL!,
  revenueCatKey: process.env.EXPO_PUBLIC_RC_KEY,
  sentryDsn: process.env.EXPO_PUBLIC_SENTRY_DSN,
  buildSha: '{sha1()}',
}}
"""
    add("expo-public-env-config", "none", "ts", "src/config.ts", t)


def n_hash_password_test():
    salt = hx(32)
    dk = hx(128)
    t = f"""import {{ scryptSync }} from 'node:crypto'
import {{ expect, test }} from 'vitest'

// stored format: scrypt$<salt>$<derived>
const STORED = 'scrypt${salt}${dk}'

test('format', () => {{
  const [alg, salt, hash] = STORED.split('$')
  expect(alg).toBe('scrypt')
  expect(salt).toHaveLength(32)
  expect(hash).toHaveLength(128)
  expect(scryptSync('x', salt, 64).toString('hex')).not.toBe(hash)
}})
"""
    add("scrypt-stored-hash-fixture", "none", "ts", "test/password.test.ts", t)


def n_mongo_local_url():
    t = f"""import mongoose from 'mongoose'

const uri = process.env.MONGODB_URI ?? 'mongodb://localhost:27017/{word()}'

export async function connect() {{
  if (mongoose.connection.readyState === 1) return
  await mongoose.connect(uri, {{ serverSelectionTimeoutMS: 5000 }})
}}
"""
    add("mongoose-local-uri-no-password", "none", "ts", "src/db.ts", t)


def n_docker_compose_dev():
    t = f"""services:
  db:
    image: postgres:16
    environment:
      POSTGRES_USER: postgres
      POSTGRES_PASSWORD: ${{POSTGRES_PASSWORD:?set in .env}}
      POSTGRES_DB: {word()}
    ports: ["5432:5432"]
  web:
    build: .
    environment:
      DATABASE_URL: postgresql://postgres:${{POSTGRES_PASSWORD}}@db:5432/{word()}
      NEXTAUTH_SECRET: ${{NEXTAUTH_SECRET}}
    depends_on: [db]
"""
    add("compose-interpolated-secrets", "none", "yml", "docker-compose.yml", t)


def n_github_workflow():
    t = f"""name: deploy
on:
  push:
    branches: [main]
jobs:
  deploy:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@{sha1()}
      - uses: pnpm/action-setup@{sha1()}
      - run: pnpm install --frozen-lockfile
      - run: pnpm build
        env:
          SENTRY_AUTH_TOKEN: ${{{{ secrets.SENTRY_AUTH_TOKEN }}}}
      - run: npx vercel deploy --prod --token=${{{{ secrets.VERCEL_TOKEN }}}}
"""
    add("gha-workflow-secret-refs", "none", "yml", ".github/workflows/deploy.yml", t)


def n_test_vector_jwt_hs256_known():
    # fixture: secret is literally labelled as test-only and short/wordy
    s = "test-only-" + word() + "-secret"
    t = f"""import jwt from 'jsonwebtoken'
import {{ expect, it }} from '@jest/globals'
import {{ authMiddleware }} from '../src/auth'

const TEST_SECRET = '{s}'

it('rejects tampered tokens', () => {{
  process.env.JWT_SECRET = TEST_SECRET
  const token = jwt.sign({{ sub: 'u1' }}, TEST_SECRET) + 'x'
  expect(() => authMiddleware(token)).toThrow()
}})
"""
    add("jest-jwt-test-only-secret", "none", "ts", "test/auth.test.ts", t)


def n_color_tokens():
    lines = "\n".join(f"  '{pick('primary','accent','muted','danger','ok','warn')}-{i*100}': '#{hx(6)}'," for i in range(1, R.randint(6, 10)))
    t = f"""import type {{ Config }} from 'tailwindcss'

export default {{
  content: ['./src/**/*.{{ts,tsx}}'],
  theme: {{ extend: {{ colors: {{
{lines}
  }} }} }},
}} satisfies Config
"""
    add("tailwind-color-hex-tokens", "none", "ts", "tailwind.config.ts", t)


SECRET_FNS = [v for k, v in sorted(globals().items()) if k.startswith("c_")]
NONE_FNS = [v for k, v in sorted(globals().items()) if k.startswith("n_")]


def build():
    # two draws per class; a draw whose text repeats an earlier case (classes
    # with no random content) is dropped, so those classes appear once
    for fn in SECRET_FNS + NONE_FNS:
        for _ in range(2):
            before = len(CASES)
            fn()
            texts = [c["text"] for c in CASES[:before]]
            if CASES[-1]["text"] in texts:
                CASES.pop()
    R.shuffle(CASES)


def main():
    build()
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "generator11.jsonl")
    with open(out, "w", encoding="utf-8") as f:
        for c in CASES:
            needle = c.pop("_needle")
            if c["label"] == "secret":
                assert needle and needle in c["text"], c["class"]
            f.write(json.dumps(c, ensure_ascii=False, sort_keys=False) + "\n")
    print(out, len(CASES))


if __name__ == "__main__":
    main()
