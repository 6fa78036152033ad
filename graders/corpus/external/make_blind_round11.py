#!/usr/bin/env python3
"""Blind round 11 corpus generator: data and platform plumbing (IaC, serverless,
pipelines, database tooling, observability). Deterministic, stdlib only."""
import base64
import json
import os
import random
import string

R = random.Random(20261214)
ORIGIN = "make_blind_round11.py seed 20261214"
SOURCE = "generator-14"

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DG = string.digits
AN = UP + LO + DG
HEX = "0123456789abcdef"
B32 = UP + "234567"
_seen = set()


def rs(alpha, n):
    while True:
        v = "".join(R.choice(alpha) for _ in range(n))
        if v not in _seen:
            _seen.add(v)
            return v


def hexs(n):
    return rs(HEX, n)


def rbytes(n):
    while True:
        b = bytes(R.getrandbits(8) for _ in range(n))
        if b not in _seen:
            _seen.add(b)
            return b


def b64(n):
    return base64.b64encode(rbytes(n)).decode()


def b64u(n):
    return base64.urlsafe_b64encode(rbytes(n)).decode().rstrip("=")


def uuid():
    h = hexs(32)
    return "%s-%s-4%s-%s%s-%s" % (h[:8], h[8:12], h[13:16], R.choice("89ab"), h[17:20], h[20:])


def pick(seq):
    return R.choice(seq)


WORDS = ["harbor", "falcon", "granite", "velvet", "cobalt", "maple", "thunder", "orchid",
         "quartz", "saffron", "glacier", "lantern", "meadow", "pepper", "tundra", "willow",
         "ember", "comet", "juniper", "marble", "nimbus", "otter", "prairie", "raven",
         "summit", "topaz", "walnut", "zephyr", "basalt", "cedar", "copper", "dune",
         "fjord", "heron", "indigo", "kestrel", "lagoon", "mistral", "nectar", "pylon"]


def human_pw():
    while True:
        a, b = R.sample(WORDS, 2)
        form = R.randrange(4)
        d = str(R.randint(10, 9999))
        s = R.choice("!#@$%&*-_.?")
        if form == 0:
            v = a.capitalize() + s + b.capitalize() + d
        elif form == 1:
            v = a + "_" + b + d + s
        elif form == 2:
            v = a.capitalize() + d + s + b
        else:
            v = a[:1].upper() + a[1:].replace("o", "0").replace("e", "3") + s + d + b.capitalize()
        if v not in _seen:
            _seen.add(v)
            return v


def strong_pw(n=None):
    n = n or R.randint(18, 30)
    while True:
        v = rs(AN + "!#%^*-_=+", n)
        if any(c in DG for c in v) and any(c in UP for c in v) and any(c in LO for c in v):
            return v


def alnum_pw(n=None):
    return rs(AN, n or R.randint(20, 32))


def akid(prefix="AKIA"):
    return prefix + rs(B32, 16)


def aws_secret():
    return rs(AN + "/+", 40)


def slack_bot():
    return "xoxb-%s-%s-%s" % (rs(DG, R.choice([11, 12])), rs(DG, 13), rs(AN, 24))


def slack_hook():
    return "https://hooks.slack.com/services/T%s/B%s/%s" % (rs(UP + DG, 8), rs(UP + DG, 10), rs(AN, 24))


def discord_hook():
    return "https://discord.com/api/webhooks/%s/%s" % (rs(DG, 19), rs(AN + "-_", 68))


def teams_hook():
    return ("https://%s.webhook.office.com/webhookb2/%s@%s/IncomingWebhook/%s/%s"
            % (pick(["contoso", "acmecorp", "northwind"]), uuid(), uuid(), hexs(32), uuid()))


def stripe_sk():
    return "sk_live_" + rs(AN, pick([24, 34, 99]))


def stripe_pk():
    return "pk_live_" + rs(AN, 99)


def sendgrid():
    return "SG." + rs(AN + "-_", 22) + "." + rs(AN + "-_", 43)


def openai_key():
    return "sk-" + rs(AN, 20) + "T3BlbkFJ" + rs(AN, 20)


def gh_pat():
    return "ghp_" + rs(AN, 36)


def dapi():
    return "dapi" + hexs(32) + pick(["", "-2", "-3"])


def dd_api():
    return hexs(32)


def dd_app():
    return hexs(40)


def nr_license():
    return hexs(36) + "NRAL"


def nr_user():
    return "NRAK-" + rs(UP + DG, 27)


def sentry_user_token():
    return "sntryu_" + hexs(64)


def grafana_sa():
    return "glsa_" + rs(AN, 32) + "_" + hexs(8)


def grafana_cloud():
    payload = json.dumps({"o": str(R.randint(100000, 999999)), "n": "otel-" + pick(WORDS),
                          "k": rs(AN, 24), "m": {"r": pick(["prod-us-east-0", "prod-eu-west-2"])}},
                         separators=(",", ":"))
    return "glc_" + base64.b64encode(payload.encode()).decode()


def azure_key():
    return base64.b64encode(rbytes(64)).decode()


def confluent_key():
    return rs(UP + DG, 16)


def confluent_secret():
    return rs(AN + "+/", 64)


def pagerduty_key():
    return hexs(32)


def cf_token():
    return rs(AN + "-_", 40)


def nkey_seed(kind="U"):
    return "S" + kind + rs(B32, 56)


def nkey_pub(kind="U"):
    return kind + rs(B32, 55)


def jwt(header, payload, sig_bytes=64):
    enc = lambda o: base64.urlsafe_b64encode(json.dumps(o, separators=(",", ":")).encode()).decode().rstrip("=")
    return enc(header) + "." + enc(payload) + "." + b64u(sig_bytes)


def wrap64(s, w=64):
    return "\n".join(s[i:i + w] for i in range(0, len(s), w))


def pem_rsa_private(pkcs8=True):
    if pkcs8:
        der = bytes.fromhex("308204bd020100300d06092a864886f70d0101010500048204a7308204a30201000282010100") + rbytes(1190)
        return "-----BEGIN PRIVATE KEY-----\n" + wrap64(base64.b64encode(der).decode()) + "\n-----END PRIVATE KEY-----"
    der = bytes.fromhex("308204a40201000282010100") + rbytes(1180)
    return "-----BEGIN RSA PRIVATE KEY-----\n" + wrap64(base64.b64encode(der).decode()) + "\n-----END RSA PRIVATE KEY-----"


def pem_ec_private():
    der = (bytes.fromhex("30770201010420") + rbytes(32) + bytes.fromhex("a00a06082a8648ce3d030107a14403420004") + rbytes(64))
    return "-----BEGIN EC PRIVATE KEY-----\n" + wrap64(base64.b64encode(der).decode()) + "\n-----END EC PRIVATE KEY-----"


def pem_public():
    der = bytes.fromhex("30820122300d06092a864886f70d01010105000382010f003082010a0282010100") + rbytes(256) + bytes.fromhex("0203010001")
    return "-----BEGIN PUBLIC KEY-----\n" + wrap64(base64.b64encode(der).decode()) + "\n-----END PUBLIC KEY-----"


def pem_cert():
    der = bytes.fromhex("308203") + rbytes(1) + bytes.fromhex("308202") + rbytes(1) + bytes.fromhex("a003020102") + rbytes(700)
    return "-----BEGIN CERTIFICATE-----\n" + wrap64(base64.b64encode(der).decode()) + "\n-----END CERTIFICATE-----"


def ssh_ed25519_pub(comment):
    blob = bytes.fromhex("0000000b7373682d6564323535313900000020") + rbytes(32)
    return "ssh-ed25519 " + base64.b64encode(blob).decode() + " " + comment


BC = "./" + AN


def bcrypt(cost=None):
    return "$2b$%02d$%s" % (cost or pick([10, 11, 12]), rs(BC, 53))


def argon2():
    return "$argon2id$v=19$m=65536,t=3,p=4$%s$%s" % (b64(16).rstrip("="), b64(32).rstrip("="))


def pbkdf2_django():
    return "pbkdf2_sha256$%d$%s$%s" % (pick([600000, 720000, 870000]), rs(AN, 22), b64(32))


def scram():
    return "SCRAM-SHA-256$4096:%s$%s:%s" % (b64(16), b64(32), b64(32))


def mysql_native():
    return "*" + hexs(40).upper()


def rabbit_hash():
    return b64(36)


def sha256d():
    return "sha256:" + hexs(64)


def gitsha():
    return hexs(40)


def acct():
    return str(R.randint(100000000000, 999999999999))


def region():
    return pick(["us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-2"])


def sm_arn(name):
    return "arn:aws:secretsmanager:%s:%s:secret:%s-%s" % (region(), acct(), name, rs(AN, 6))


def kms_arn():
    return "arn:aws:kms:%s:%s:key/%s" % (region(), acct(), uuid())


SVC = ["orders", "billing", "ledger", "inventory", "payments", "analytics", "events", "reporting",
       "search", "catalog", "ingest", "metrics", "shipping", "accounts", "risk", "pricing"]
ORG = ["acme", "northwind", "globex", "initech", "umbrella", "hooli", "vandelay", "tyrell", "wayne", "stark"]


def svc():
    return pick(SVC)


def org():
    return pick(ORG)


LAST_ORG = [None]


def jorg():
    LAST_ORG[0] = pick(ORG)
    return LAST_ORG[0]


def T(_tpl, **kw):
    s = _tpl
    for k, v in kw.items():
        s = s.replace("%%" + k + "%%", str(v))
    if "%%" in s:
        raise ValueError("unfilled template slot in: " + s[:200])
    return s.lstrip("\n")


def b64s(s):
    return base64.b64encode(s.encode()).decode()


# ---------------------------------------------------------------- secret classes

def s_tfvars_db_password(i):
    s, env = svc(), pick(["prod", "production", "prd"])
    pw = pick([human_pw, strong_pw])()
    if i % 3 == 0:
        return "tfvars", "envs/%s/terraform.tfvars" % env, T("""
aws_region        = "%%r%%"
environment       = "%%env%%"
service_name      = "%%s%%"

vpc_id             = "vpc-%%vpc%%"
private_subnet_ids = ["subnet-%%sn1%%", "subnet-%%sn2%%"]

db_instance_class    = "db.r6g.large"
db_allocated_storage = 200
db_engine_version    = "15.5"
db_name              = "%%s%%"
db_username          = "%%s%%_admin"
db_password          = "%%pw%%"

backup_retention_days = 14
multi_az              = true

tags = {
  Team       = "platform-data"
  CostCenter = "cc-4410"
  ManagedBy  = "terraform"
}
""", r=region(), env=env, s=s, vpc=hexs(17), sn1=hexs(17), sn2=hexs(17), pw=pw)
    if i % 3 == 1:
        return "json", "infra/%s/terraform.tfvars.json" % s, T("""
{
  "region": "%%r%%",
  "cluster_identifier": "%%s%%-%%env%%",
  "engine": "aurora-postgresql",
  "instance_count": 2,
  "master_username": "postgres",
  "master_password": "%%pw%%",
  "deletion_protection": true,
  "performance_insights_enabled": true,
  "allowed_cidr_blocks": ["10.40.0.0/16", "10.41.0.0/16"]
}
""", r=region(), s=s, env=env, pw=pw)
    return "tfvars", "terraform/%s.auto.tfvars" % env, T("""
# %%env%% settings for the reporting warehouse
project_id = "%%o%%-data-%%env%%"
region     = "europe-west1"

warehouse = {
  tier              = "db-custom-4-16384"
  disk_size_gb      = 500
  availability_type = "REGIONAL"
  users = {
    looker = {
      password = "%%pw%%"
    }
    dbt = {
      password = "%%pw2%%"
    }
  }
}
""", env=env, o=org(), pw=pw, pw2=alnum_pw())


def s_tf_provider_static_keys(i):
    ak, sk = akid(), aws_secret()
    v = i % 4
    if v == 0:
        return "tf", "providers.tf", T("""
terraform {
  required_version = ">= 1.5.0"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.40"
    }
  }
}

provider "aws" {
  region     = var.region
  access_key = "%%ak%%"
  secret_key = "%%sk%%"

  default_tags {
    tags = {
      Project = "%%s%%"
      Owner   = "platform"
    }
  }
}
""", ak=ak, sk=sk, s=svc())
    if v == 1:
        return "tf", "stacks/%s/backend.tf" % svc(), T("""
terraform {
  backend "s3" {
    bucket         = "%%o%%-terraform-state"
    key            = "data-platform/%%s%%.tfstate"
    region         = "%%r%%"
    dynamodb_table = "terraform-locks"
    encrypt        = true
    access_key     = "%%ak%%"
    secret_key     = "%%sk%%"
  }
}
""", o=org(), s=svc(), r=region(), ak=ak, sk=sk)
    if v == 2:
        return "tf", "modules/replication/main.tf", T("""
# Cross-account replication. The destination account is reached with the
# ci-replication IAM user (%%ak%%) until we move to role chaining.
provider "aws" {
  alias  = "destination"
  region = var.destination_region
  assume_role {
    role_arn = "arn:aws:iam::%%acct%%:role/replication-target"
  }
}

resource "aws_s3_bucket_replication_configuration" "this" {
  role   = aws_iam_role.replication.arn
  bucket = var.source_bucket_id

  rule {
    id     = "all-objects"
    status = "Enabled"
    destination {
      bucket        = var.destination_bucket_arn
      storage_class = "STANDARD_IA"
    }
  }
}
""", ak=ak, acct=acct())
    return "tf", "live/%s/locals.tf" % pick(["prod", "staging"]), T("""
locals {
  name = "%%s%%-pipeline"

  # firehose writes to the partner bucket with their keys
  partner_credentials = {
    access_key_id     = "%%ak%%"
    secret_access_key = "%%sk%%"
    bucket            = "%%o%%-inbound-feeds"
  }

  common_tags = {
    Service = local.name
  }
}
""", s=svc(), ak=ak, sk=sk, o=org())


def s_tf_user_data_heredoc(i):
    v = i % 3
    if v == 0:
        return "tf", "modules/bastion/main.tf", T("""
resource "aws_instance" "collector" {
  ami                    = data.aws_ami.al2023.id
  instance_type          = "t3.medium"
  subnet_id              = var.subnet_id
  vpc_security_group_ids = [aws_security_group.collector.id]
  iam_instance_profile   = aws_iam_instance_profile.collector.name

  user_data = <<-EOF
    #!/bin/bash
    set -euo pipefail
    DD_API_KEY=%%dd%% DD_SITE="datadoghq.eu" \\
      bash -c "$(curl -L https://install.datadoghq.com/scripts/install_script_agent7.sh)"
    systemctl enable --now datadog-agent
  EOF

  tags = {
    Name = "log-collector"
  }
}
""", dd=dd_api())
    if v == 1:
        return "tf", "runners/main.tf", T("""
resource "aws_launch_template" "runner" {
  name_prefix   = "ci-runner-"
  image_id      = var.ami_id
  instance_type = "c6i.xlarge"

  user_data = base64encode(<<-EOT
    #!/usr/bin/env bash
    mkdir -p /opt/actions-runner && cd /opt/actions-runner
    curl -sL -o runner.tar.gz https://github.com/actions/runner/releases/download/v2.316.0/actions-runner-linux-x64-2.316.0.tar.gz
    tar xzf runner.tar.gz
    export RUNNER_CFG_PAT=%%gh%%
    ./config.sh --url https://github.com/%%o%% --unattended --labels ec2,linux
    ./svc.sh install && ./svc.sh start
  EOT
  )
}
""", gh=gh_pat(), o=org())
    return "tf", "compute/etl_worker.tf", T("""
resource "google_compute_instance" "etl_worker" {
  name         = "etl-worker-01"
  machine_type = "e2-standard-4"
  zone         = "europe-west1-b"

  boot_disk {
    initialize_params {
      image = "debian-cloud/debian-12"
    }
  }

  network_interface {
    subnetwork = var.subnetwork
  }

  metadata_startup_script = templatefile("${path.module}/startup.sh.tpl", {
    registry_user     = "deploy"
    registry_password = "%%pw%%"
    warehouse_dsn     = "postgresql://etl:%%pw2%%@10.20.0.12:5432/warehouse"
  })
}
""", pw=strong_pw(), pw2=human_pw())


def s_tf_secret_resource_literal(i):
    s = svc()
    v = i % 3
    if v == 0:
        return "tf", "modules/%s-params/ssm.tf" % s, T("""
resource "aws_ssm_parameter" "db_url" {
  name  = "/%%s%%/prod/DATABASE_URL"
  type  = "SecureString"
  value = "postgres://%%s%%:%%pw%%@%%s%%-prod.cluster-%%cl%%.%%r%%.rds.amazonaws.com:5432/%%s%%"
}

resource "aws_ssm_parameter" "log_level" {
  name  = "/%%s%%/prod/LOG_LEVEL"
  type  = "String"
  value = "info"
}
""", s=s, pw=human_pw(), cl=rs(LO + DG, 12), r=region())
    if v == 1:
        return "tf", "secrets.tf", T("""
resource "aws_secretsmanager_secret" "partner_api" {
  name        = "%%s%%/partner-api"
  description = "Credentials for the partner settlement API"
  kms_key_id  = aws_kms_key.secrets.arn
}

resource "aws_secretsmanager_secret_version" "partner_api" {
  secret_id = aws_secretsmanager_secret.partner_api.id
  secret_string = jsonencode({
    client_id     = "%%s%%-settlement"
    client_secret = "%%cs%%"
    token_url     = "https://auth.partner.example.net/oauth2/token"
  })
}
""", s=s, cs=rs(AN + "-_~.", 40))
    pw = human_pw()
    return "tf", "k8s/airflow_secrets.tf", T("""
resource "kubernetes_secret" "airflow_metadata" {
  metadata {
    name      = "airflow-metadata-db"
    namespace = "airflow"
  }

  data = {
    connection = "postgresql+psycopg2://airflow:${base64decode("%%b%%")}@airflow-db.airflow.svc:5432/airflow"
  }

  type = "Opaque"
}
""", b=b64s(pw))


def s_pulumi_plaintext(i):
    s = svc()
    v = i % 3
    if v == 0:
        return "yaml", "infra/Pulumi.%s.yaml" % pick(["prod", "production"]), T("""
config:
  aws:region: %%r%%
  %%s%%:vpcCidr: 10.60.0.0/16
  %%s%%:dbInstanceClass: db.t4g.large
  %%s%%:dbUser: app
  %%s%%:dbPassword: %%pw%%
  %%s%%:sentryDsnSecret:
    secure: v1:%%n%%:%%c%%
  %%s%%:replicas: "3"
""", r=region(), s=s, pw=human_pw(), n=b64(12), c=b64(48))
    if v == 1:
        return "ts", "infra/index.ts", T("""
import * as pulumi from "@pulumi/pulumi";
import * as aws from "@pulumi/aws";

const cfg = new pulumi.Config();
const env = pulumi.getStack();

const subnetGroup = new aws.rds.SubnetGroup(`%%s%%-${env}`, {
    subnetIds: cfg.requireObject<string[]>("privateSubnetIds"),
});

export const db = new aws.rds.Instance(`%%s%%-${env}`, {
    engine: "postgres",
    engineVersion: "16.2",
    instanceClass: "db.t4g.medium",
    allocatedStorage: 50,
    dbSubnetGroupName: subnetGroup.name,
    username: "%%s%%",
    password: "%%pw%%",
    skipFinalSnapshot: false,
    finalSnapshotIdentifier: `%%s%%-${env}-final`,
});
""", s=s, pw=strong_pw())
    return "py", "infra/__main__.py", T("""
import pulumi
import pulumi_kubernetes as k8s

ns = k8s.core.v1.Namespace("kafka-connect")

# wrap as secret so it is masked in pulumi preview output
sink_password = pulumi.Output.secret("%%pw%%")

k8s.core.v1.Secret(
    "snowflake-sink",
    metadata={"namespace": ns.metadata["name"]},
    string_data={
        "SNOWFLAKE_USER": "KAFKA_CONNECT",
        "SNOWFLAKE_PASSWORD": sink_password,
    },
)
""", pw=human_pw())


def s_cdk_unsafe_plaintext(i):
    s = svc()
    v = i % 4
    if v == 0:
        return "ts", "lib/%s-stack.ts" % s, T("""
import { Stack, StackProps, SecretValue, Duration } from 'aws-cdk-lib';
import * as rds from 'aws-cdk-lib/aws-rds';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';

export class %%S%%Stack extends Stack {
  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const vpc = ec2.Vpc.fromLookup(this, 'Vpc', { vpcName: 'core' });

    new rds.DatabaseInstance(this, 'Db', {
      engine: rds.DatabaseInstanceEngine.postgres({ version: rds.PostgresEngineVersion.VER_16 }),
      vpc,
      credentials: rds.Credentials.fromPassword('%%s%%', SecretValue.unsafePlainText('%%pw%%')),
      backupRetention: Duration.days(7),
    });
  }
}
""", s=s, S=s.capitalize(), pw=human_pw())
    if v == 1:
        return "py", "stacks/ingest_stack.py", T("""
from aws_cdk import Stack, Duration
from aws_cdk import aws_lambda as _lambda
from constructs import Construct


class IngestStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs) -> None:
        super().__init__(scope, construct_id, **kwargs)

        _lambda.Function(
            self,
            "WebhookIngest",
            runtime=_lambda.Runtime.PYTHON_3_12,
            handler="app.handler",
            code=_lambda.Code.from_asset("lambda/ingest"),
            timeout=Duration.seconds(30),
            environment={
                "SEGMENT_WRITE_KEY": "%%wk%%",
                "SHOPIFY_WEBHOOK_SECRET": "%%ws%%",
                "LOG_LEVEL": "INFO",
            },
        )
""", wk=rs(AN, 32), ws=hexs(64))
    if v == 2:
        return "java", "src/main/java/com/%s/infra/BrokerStack.java" % jorg(), T("""
package com.%%o%%.infra;

import software.amazon.awscdk.SecretValue;
import software.amazon.awscdk.Stack;
import software.amazon.awscdk.StackProps;
import software.amazon.awscdk.services.amazonmq.CfnBroker;
import software.constructs.Construct;

import java.util.List;

public class BrokerStack extends Stack {
    public BrokerStack(final Construct scope, final String id, final StackProps props) {
        super(scope, id, props);

        CfnBroker.Builder.create(this, "Broker")
                .brokerName("%%s%%-events")
                .engineType("RABBITMQ")
                .engineVersion("3.12.13")
                .hostInstanceType("mq.m5.large")
                .deploymentMode("CLUSTER_MULTI_AZ")
                .publiclyAccessible(false)
                .autoMinorVersionUpgrade(true)
                .users(List.of(CfnBroker.UserProperty.builder()
                        .username("%%s%%-svc")
                        .password(SecretValue.unsafePlainText("%%pw%%").unsafeUnwrap())
                        .build()))
                .build();
    }
}
""", o=LAST_ORG[0], s=s, pw=strong_pw())
    tok = cf_token()
    h = len(tok) // 2
    return "ts", "lib/edge-stack.ts", T("""
import * as cdk from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';

// Cloudflare token for cache purge, split to keep lines short
const CF_PURGE_TOKEN = '%%a%%' +
  '%%b%%';

export class EdgeStack extends cdk.Stack {
  constructor(scope: Construct, id: string, props?: cdk.StackProps) {
    super(scope, id, props);
    new lambda.Function(this, 'PurgeOnDeploy', {
      runtime: lambda.Runtime.NODEJS_20_X,
      handler: 'purge.handler',
      code: lambda.Code.fromAsset('lambda/purge'),
      environment: {
        CF_ZONE_ID: '%%zone%%',
        CF_API_TOKEN: CF_PURGE_TOKEN,
      },
    });
  }
}
""", a=tok[:h], b=tok[h:], zone=hexs(32))


def s_cfn_noecho_default(i):
    v = i % 3
    if v == 0:
        return "yaml", "cloudformation/%s-db.yaml" % svc(), T("""
AWSTemplateFormatVersion: '2010-09-09'
Description: Reporting database

Parameters:
  DBUsername:
    Type: String
    Default: reporting
  DBPassword:
    Type: String
    NoEcho: true
    Default: '%%pw%%'
    MinLength: 12

Resources:
  ReportingDB:
    Type: AWS::RDS::DBInstance
    DeletionPolicy: Snapshot
    Properties:
      Engine: mysql
      EngineVersion: '8.0.36'
      DBInstanceClass: db.m6g.large
      AllocatedStorage: '100'
      MasterUsername: !Ref DBUsername
      MasterUserPassword: !Ref DBPassword
      StorageEncrypted: true
""", pw=human_pw())
    if v == 1:
        return "json", "templates/alerts-stack.template.json", T("""
{
  "AWSTemplateFormatVersion": "2010-09-09",
  "Resources": {
    "AlarmForwarder": {
      "Type": "AWS::Lambda::Function",
      "Properties": {
        "Runtime": "python3.12",
        "Handler": "index.handler",
        "Role": { "Fn::GetAtt": ["ForwarderRole", "Arn"] },
        "Timeout": 15,
        "Environment": {
          "Variables": {
            "SLACK_WEBHOOK_URL": "%%hook%%",
            "CHANNEL": "#data-alerts"
          }
        },
        "Code": { "S3Bucket": "%%o%%-artifacts", "S3Key": "alarm-forwarder/%%sha%%.zip" }
      }
    }
  }
}
""", hook=slack_hook(), o=org(), sha=gitsha())
    return "yml", "sam/template.yml", T("""
AWSTemplateFormatVersion: '2010-09-09'
Transform: AWS::Serverless-2016-10-31

Globals:
  Function:
    Runtime: nodejs20.x
    Timeout: 20

Resources:
  SyncFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: src/sync
      Handler: index.handler
      Environment:
        Variables:
          HUBSPOT_PRIVATE_APP_TOKEN: pat-na1-%%u%%
          TABLE_NAME: !Ref ContactsTable
      Events:
        Nightly:
          Type: Schedule
          Properties:
            Schedule: cron(0 3 * * ? *)
  ContactsTable:
    Type: AWS::Serverless::SimpleTable
""", u=uuid())


def s_bicep_secret(i):
    v = i % 3
    if v == 0:
        return "bicep", "infra/sql.bicep", T("""
param location string = resourceGroup().location
param serverName string = 'sql-%%s%%-prod'

@secure()
param administratorLoginPassword string = '%%pw%%'

resource sqlServer 'Microsoft.Sql/servers@2023-05-01-preview' = {
  name: serverName
  location: location
  properties: {
    administratorLogin: 'sqladmin'
    administratorLoginPassword: administratorLoginPassword
    minimalTlsVersion: '1.2'
  }
}

resource db 'Microsoft.Sql/servers/databases@2023-05-01-preview' = {
  parent: sqlServer
  name: '%%s%%'
  location: location
  sku: {
    name: 'GP_S_Gen5_2'
  }
}
""", s=svc(), pw=human_pw())
    if v == 1:
        return "bicepparam", "infra/main.prod.bicepparam", T("""
using './main.bicep'

param environmentName = 'prod'
param location = 'westeurope'
param postgresAdminLogin = 'pgadmin'
param postgresAdminPassword = '%%pw%%'
param eventHubSku = 'Standard'
param tags = {
  owner: 'data-platform'
}
""", pw=strong_pw())
    return "bicep", "modules/functionapp.bicep", T("""
param location string
param appName string

resource plan 'Microsoft.Web/serverfarms@2023-01-01' existing = {
  name: 'asp-${appName}'
}

resource fn 'Microsoft.Web/sites@2023-01-01' = {
  name: appName
  location: location
  kind: 'functionapp'
  properties: {
    serverFarmId: plan.id
    siteConfig: {
      appSettings: [
        {
          name: 'AzureWebJobsStorage'
          value: 'DefaultEndpointsProtocol=https;AccountName=st%%o%%ingest;AccountKey=%%k%%;EndpointSuffix=core.windows.net'
        }
        {
          name: 'FUNCTIONS_WORKER_RUNTIME'
          value: 'python'
        }
      ]
    }
  }
}
""", o=org(), k=azure_key())


def s_lambda_py_hardcoded(i):
    v = i % 3
    if v == 0:
        return "py", "functions/notify/handler.py", T("""
import json
import logging
import urllib.request

logger = logging.getLogger()
logger.setLevel(logging.INFO)

SLACK_BOT_TOKEN = "%%tok%%"
CHANNEL = "C%%ch%%"


def handler(event, context):
    for record in event.get("Records", []):
        body = json.loads(record["body"])
        text = f":rotating_light: {body['pipeline']} failed at {body['task']}"
        req = urllib.request.Request(
            "https://slack.com/api/chat.postMessage",
            data=json.dumps({"channel": CHANNEL, "text": text}).encode(),
            headers={
                "Authorization": f"Bearer {SLACK_BOT_TOKEN}",
                "Content-Type": "application/json; charset=utf-8",
            },
        )
        with urllib.request.urlopen(req, timeout=5) as resp:
            logger.info("slack status %s", resp.status)
    return {"ok": True}
""", tok=slack_bot(), ch=rs(UP + DG, 10))
    if v == 1:
        return "py", "lambdas/refund_sync/app.py", T("""
import os

import boto3
import stripe

stripe.api_key = os.environ.get("STRIPE_API_KEY", "%%sk%%")
table = boto3.resource("dynamodb").Table(os.environ["REFUNDS_TABLE"])


def lambda_handler(event, context):
    since = int(event.get("since", 0))
    refunds = stripe.Refund.list(created={"gte": since}, limit=100)
    with table.batch_writer() as batch:
        for r in refunds.auto_paging_iter():
            batch.put_item(Item={"id": r.id, "amount": r.amount, "status": r.status})
    return {"count": len(refunds.data)}
""", sk=stripe_sk())
    return "py", "src/exporter/lambda_function.py", T("""
import base64
import gzip
import json
import urllib.request

# Splunk HEC for the security data lake
HEC_URL = "https://http-inputs-%%o%%.splunkcloud.com/services/collector/event"
HEC_TOKEN = "%%u%%"


def lambda_handler(event, context):
    payload = gzip.decompress(base64.b64decode(event["awslogs"]["data"]))
    data = json.loads(payload)
    events = "".join(
        json.dumps({"event": e["message"], "source": data["logGroup"]}) for e in data["logEvents"]
    )
    req = urllib.request.Request(
        HEC_URL, data=events.encode(), headers={"Authorization": "Splunk " + HEC_TOKEN}
    )
    urllib.request.urlopen(req, timeout=10)
""", o=org(), u=uuid().upper())


def s_lambda_node_go_secret(i):
    v = i % 4
    if i == 4:
        pw = strong_pw(16)
        chars = ", ".join("'%s'" % (c if c not in "'\\" else "\\" + c) for c in pw)
        return "java", "src/main/java/com/%s/lambda/ExportHandler.java" % jorg(), T("""
package com.%%o%%.lambda;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;

import java.sql.Connection;
import java.sql.DriverManager;
import java.util.Map;

public class ExportHandler implements RequestHandler<Map<String, String>, String> {

    @Override
    public String handleRequest(Map<String, String> input, Context context) {
        try (Connection c = DriverManager.getConnection(DbSettings.URL, DbSettings.USER, new String(DbSettings.PASSWORD))) {
            return "exported " + Exporter.run(c, input.get("table"));
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }
}

final class DbSettings {
    static final String URL = "jdbc:postgresql://%%s%%-db.prod.internal:5432/%%s%%";
    static final String USER = "exporter";
    static final char[] PASSWORD = {%%chars%%};

    private DbSettings() {}
}
""", o=LAST_ORG[0], s=svc(), chars=chars)
    if v == 0:
        return "mjs", "functions/welcome-email/index.mjs", T("""
import sgMail from '@sendgrid/mail';

sgMail.setApiKey('%%sg%%');

export const handler = async (event) => {
  const { email, firstName } = JSON.parse(event.body ?? '{}');
  if (!email) {
    return { statusCode: 400, body: 'missing email' };
  }
  await sgMail.send({
    to: email,
    from: 'hello@%%o%%.io',
    templateId: 'd-%%tpl%%',
    dynamicTemplateData: { firstName },
  });
  return { statusCode: 202, body: '' };
};
""", sg=sendgrid(), o=org(), tpl=hexs(32))
    if v == 1:
        return "ts", "src/handlers/stripeWebhook.ts", T("""
import type { APIGatewayProxyHandlerV2 } from 'aws-lambda';
import Stripe from 'stripe';

const stripe = new Stripe(process.env.STRIPE_KEY!, { apiVersion: '2024-06-20' });
const endpointSecret = 'whsec_%%w%%';

export const handler: APIGatewayProxyHandlerV2 = async (event) => {
  const sig = event.headers['stripe-signature'] ?? '';
  let evt: Stripe.Event;
  try {
    evt = stripe.webhooks.constructEvent(event.body ?? '', sig, endpointSecret);
  } catch (err) {
    return { statusCode: 400, body: `Webhook Error: ${(err as Error).message}` };
  }
  console.log('received', evt.type, evt.id);
  return { statusCode: 200, body: 'ok' };
};
""", w=rs(AN, 32))
    if v == 2:
        key = rbytes(32)
        rows = []
        hx = ["0x%02x" % b for b in key]
        for k in range(0, 32, 8):
            rows.append("\t" + ", ".join(hx[k:k + 8]) + ",")
        return "go", "cmd/authorizer/main.go", T("""
package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
)

// HMAC key shared with the ingestion gateway.
var signingKey = []byte{
%%rows%%
}

func verify(body, sig string) bool {
	mac := hmac.New(sha256.New, signingKey)
	mac.Write([]byte(body))
	return hmac.Equal([]byte(hex.EncodeToString(mac.Sum(nil))), []byte(sig))
}

func handler(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2CustomAuthorizerSimpleResponse, error) {
	return events.APIGatewayV2CustomAuthorizerSimpleResponse{
		IsAuthorized: verify(req.Body, req.Headers["x-signature"]),
	}, nil
}

func main() { lambda.Start(handler) }
""", rows="\n".join(rows))
    return "go", "internal/mq/client.go", T("""
package mq

import (
	"time"

	"github.com/nats-io/nats.go"
)

const (
	natsURL  = "nats://nats-0.nats.messaging.svc:4222,nats://nats-1.nats.messaging.svc:4222"
	natsUser = "%%s%%-publisher"
	natsPass = "%%pw%%"
)

func Connect(name string) (*nats.Conn, error) {
	return nats.Connect(natsURL,
		nats.Name(name),
		nats.UserInfo(natsUser, natsPass),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(2*time.Second),
	)
}
""", s=svc(), pw=strong_pw())


def s_wrangler_vars_secret(i):
    v = i % 3
    name = pick(["edge-api", "img-resizer", "webhook-relay", "geo-router"])
    if v == 0:
        return "toml", "wrangler.toml", T("""
name = "%%n%%"
main = "src/index.ts"
compatibility_date = "2024-09-23"
account_id = "%%acc%%"

[vars]
ENVIRONMENT = "production"
UPSTREAM_URL = "https://api.%%o%%.com"
OPENAI_API_KEY = "%%k%%"

[[kv_namespaces]]
binding = "CACHE"
id = "%%kv%%"
""", n=name, acc=hexs(32), o=org(), k=openai_key(), kv=hexs(32))
    if v == 1:
        return "toml", "workers/%s/wrangler.toml" % name, T("""
name = "%%n%%"
main = "dist/worker.js"
compatibility_date = "2024-06-01"
workers_dev = false
routes = [{ pattern = "hooks.%%o%%.dev/*", zone_name = "%%o%%.dev" }]

[env.staging.vars]
DISCORD_WEBHOOK = "%%dh%%"

[env.production.vars]
DISCORD_WEBHOOK = "%%dh2%%"
""", n=name, o=org(), dh=discord_hook(), dh2=discord_hook())
    return "jsonc", "wrangler.jsonc", T("""
{
  "name": "%%n%%",
  "main": "src/worker.ts",
  "compatibility_date": "2024-11-01",
  "observability": { "enabled": true },
  // TODO move to `wrangler secret put` before launch
  "vars": {
    "R2_ACCESS_KEY_ID": "%%a%%",
    "R2_SECRET_ACCESS_KEY": "%%s%%",
    "BUCKET": "media-originals"
  }
}
""", n=name, a=hexs(32), s=hexs(64))


def s_vercel_netlify_env_secret(i):
    v = i % 3
    if v == 0:
        return "toml", "netlify.toml", T("""
[build]
  command = "npm run build"
  publish = "dist"

[build.environment]
  NODE_VERSION = "20"
  DATABASE_URL = "postgresql://app_%%s%%:%%pw%%@ep-%%w1%%-%%w2%%-%%n%%.us-east-2.aws.neon.tech/%%s%%?sslmode=require"

[[redirects]]
  from = "/api/*"
  to = "/.netlify/functions/:splat"
  status = 200
""", s=svc(), pw=rs(AN, 12), w1=pick(WORDS), w2=pick(WORDS), n=rs(LO + DG, 8))
    if v == 1:
        return "json", "vercel.json", T("""
{
  "$schema": "https://openapi.vercel.sh/vercel.json",
  "framework": "nextjs",
  "regions": ["fra1"],
  "crons": [{ "path": "/api/cron/digest", "schedule": "0 7 * * *" }],
  "build": {
    "env": {
      "NEXT_PUBLIC_APP_URL": "https://app.%%o%%.com",
      "RESEND_API_KEY": "re_%%r%%_%%r2%%"
    }
  }
}
""", o=org(), r=rs(AN, 8), r2=rs(AN, 24))
    return "toml", "apps/web/netlify.toml", T("""
[context.production.environment]
  API_BASE = "https://api.%%o%%.com"
  ALGOLIA_APP_ID = "%%app%%"
  # admin key is needed at build time for index sync
  ALGOLIA_ADMIN_KEY = "%%k%%"

[context.deploy-preview.environment]
  API_BASE = "https://staging-api.%%o%%.com"
""", o=org(), app=rs(UP + DG, 10), k=hexs(32))

def s_airflow_conn_uri(i):
    v = i % 3
    if v == 0:
        return "yaml", "deploy/airflow/docker-compose.yaml", T("""
x-airflow-common: &airflow-common
  image: apache/airflow:2.9.3-python3.11
  environment:
    AIRFLOW__CORE__EXECUTOR: CeleryExecutor
    AIRFLOW__DATABASE__SQL_ALCHEMY_CONN: postgresql+psycopg2://airflow:airflow@postgres/airflow
    AIRFLOW__CELERY__BROKER_URL: redis://:@redis:6379/0
    AIRFLOW_CONN_WAREHOUSE: 'postgresql://etl_loader:%%pw%%@dw-%%s%%.internal.%%o%%.net:5432/analytics'
    AIRFLOW_CONN_AWS_DEFAULT: 'aws://?region_name=%%r%%'
  volumes:
    - ./dags:/opt/airflow/dags

services:
  airflow-scheduler:
    <<: *airflow-common
    command: scheduler
  airflow-worker:
    <<: *airflow-common
    command: celery worker
""", pw=human_pw(), s=svc(), o=org(), r=region())
    if v == 1:
        return "yaml", "airflow_settings.yaml", T("""
airflow:
  connections:
    - conn_id: snowflake_default
      conn_type: snowflake
      conn_host: %%acct%%.snowflakecomputing.com
      conn_login: AIRFLOW_SVC
      conn_password: %%pw%%
      conn_schema: RAW
      conn_extra:
        warehouse: LOADING_WH
        database: RAW
        role: LOADER
  variables:
    - variable_name: alert_email
      variable_value: data-oncall@%%o%%.com
""", acct=rs(LO, 7) + "-" + rs(LO + DG, 7), pw=strong_pw(), o=org())
    return "env", "airflow/.env.prod", T("""
AIRFLOW_UID=50000
AIRFLOW__WEBSERVER__BASE_URL=https://airflow.%%o%%.net
AIRFLOW_CONN_SALESFORCE_API='{"conn_type": "http", "host": "https://%%o%%.my.salesforce.com", "login": "integration@%%o%%.com", "password": "%%pw%%", "extra": {"security_token": "%%st%%"}}'
AIRFLOW_CONN_SFTP_PARTNER=sftp://%%o%%_drop:%%pw2%%@sftp.partner-feeds.com:22
""", o=org(), pw=human_pw(), st=rs(AN, 25), pw2=alnum_pw(16))


def s_airflow_dag_embedded(i):
    v = i % 3
    if v == 0:
        return "py", "dags/hubspot_export.py", T("""
from datetime import datetime, timedelta

from airflow import DAG
from airflow.models import Variable
from airflow.providers.http.operators.http import HttpOperator

HUBSPOT_TOKEN = Variable.get("hubspot_token", default_var="pat-eu1-%%u%%")

with DAG(
    dag_id="hubspot_contacts_export",
    start_date=datetime(2024, 3, 1),
    schedule="@daily",
    catchup=False,
    default_args={"retries": 2, "retry_delay": timedelta(minutes=5)},
    tags=["crm", "export"],
) as dag:
    export = HttpOperator(
        task_id="start_export",
        http_conn_id="hubspot_api",
        endpoint="/crm/v3/exports/export/async",
        method="POST",
        headers={"Authorization": f"Bearer {HUBSPOT_TOKEN}", "Content-Type": "application/json"},
        data='{"exportType": "VIEW", "format": "CSV", "objectType": "CONTACT"}',
    )
""", u=uuid())
    if v == 1:
        return "py", "dags/ledger_snapshot.py", T("""
import pendulum
from airflow.decorators import dag, task
from airflow.providers.postgres.hooks.postgres import PostgresHook

# previously:
#   conn = psycopg2.connect("host=ledger-replica.%%o%%.internal dbname=ledger user=snapshot password=%%pw%%")
# now goes through the ledger_replica connection


@dag(schedule="0 2 * * *", start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False)
def ledger_snapshot():
    @task
    def dump(ds=None):
        hook = PostgresHook(postgres_conn_id="ledger_replica")
        hook.copy_expert(
            "COPY (SELECT * FROM entries WHERE posted_on = %s) TO STDOUT WITH CSV HEADER" % repr(ds),
            f"/tmp/ledger_{ds}.csv",
        )

    dump()


ledger_snapshot()
""", o=org(), pw=human_pw())
    return "py", "dags/s3_to_redshift.py", T("""
from datetime import datetime

from airflow import DAG
from airflow.providers.amazon.aws.transfers.s3_to_redshift import S3ToRedshiftOperator

COPY_OPTIONS = [
    "FORMAT AS PARQUET",
    "CREDENTIALS 'aws_access_key_id=%%ak%%;aws_secret_access_key=%%sk%%'",
]

with DAG("s3_to_redshift_%%s%%", start_date=datetime(2024, 5, 1), schedule="@hourly", catchup=False) as dag:
    S3ToRedshiftOperator(
        task_id="copy_%%s%%",
        schema="staging",
        table="%%s%%",
        s3_bucket="%%o%%-lake-curated",
        s3_key="%%s%%/{{ ds }}/",
        redshift_conn_id="redshift_dw",
        copy_options=COPY_OPTIONS,
        method="UPSERT",
        upsert_keys=["id"],
    )
""", ak=akid(), sk=aws_secret(), s=svc(), o=org())


def s_dbt_profiles_secret(i):
    v = i % 4
    if v == 0:
        return "yml", "profiles.yml", T("""
analytics:
  target: prod
  outputs:
    dev:
      type: postgres
      host: localhost
      user: "{{ env_var('DBT_USER') }}"
      password: "{{ env_var('DBT_PASSWORD') }}"
      port: 5432
      dbname: analytics_dev
      schema: dbt_dev
      threads: 4
    prod:
      type: postgres
      host: warehouse.%%o%%.internal
      user: dbt_prod
      password: "%%pw%%"
      port: 5432
      dbname: analytics
      schema: marts
      threads: 8
""", o=org(), pw=human_pw())
    if v == 1:
        return "yml", "transform/profiles.yml", T("""
%%o%%_snowflake:
  target: ci
  outputs:
    ci:
      type: snowflake
      account: %%acct%%
      user: DBT_CI
      password: %%pw%%
      role: TRANSFORMER
      warehouse: TRANSFORMING
      database: ANALYTICS_CI
      schema: PR_BUILD
      threads: 8
      client_session_keep_alive: false
""", o=org(), acct=rs(UP, 2) + rs(DG, 5) + ".eu-central-1", pw=strong_pw())
    if v == 2:
        return "yml", "dbt/profiles.yml", T("""
lakehouse:
  target: prod
  outputs:
    prod:
      type: databricks
      catalog: main
      schema: gold
      host: %%o%%-prod.cloud.databricks.com
      http_path: /sql/1.0/warehouses/%%wh%%
      token: %%t%%
      threads: 12
""", o=org(), wh=hexs(16), t=dapi())
    key = pem_rsa_private()
    ind = "\n".join("          " + l for l in key.split("\n"))
    return "yml", "profiles.yml", T("""
bq:
  target: prod
  outputs:
    prod:
      type: bigquery
      method: service-account-json
      project: %%o%%-analytics
      dataset: dbt_prod
      threads: 16
      keyfile_json:
        type: service_account
        project_id: %%o%%-analytics
        private_key_id: %%kid%%
        private_key: |
%%key%%
        client_email: dbt-runner@%%o%%-analytics.iam.gserviceaccount.com
        client_id: "%%cid%%"
        token_uri: https://oauth2.googleapis.com/token
""", o=org(), kid=hexs(40), key=ind, cid=rs(DG, 21))


def s_databricks_token(i):
    v = i % 3
    if v == 0:
        return "py", "notebooks/ingest/01_pull_partner_feed.py", T("""
# Databricks notebook source
# MAGIC %md
# MAGIC ## Pull partner feed and trigger downstream job

# COMMAND ----------

import requests

HOST = "https://%%o%%-prod.cloud.databricks.com"
TOKEN = "%%t%%"

# COMMAND ----------

df = spark.read.format("json").load("s3://%%o%%-landing/partner/{}/".format(dbutils.widgets.get("ds")))
df.write.mode("overwrite").saveAsTable("bronze.partner_events")

# COMMAND ----------

resp = requests.post(
    f"{HOST}/api/2.1/jobs/run-now",
    headers={"Authorization": f"Bearer {TOKEN}"},
    json={"job_id": %%jid%%},
    timeout=30,
)
resp.raise_for_status()
""", o=org(), t=dapi(), jid=R.randint(10**14, 10**15))
    if v == 1:
        return "json", "jobs/silver_refresh.job.json", T("""
{
  "name": "silver_refresh",
  "max_concurrent_runs": 1,
  "job_clusters": [
    {
      "job_cluster_key": "main",
      "new_cluster": {
        "spark_version": "14.3.x-scala2.12",
        "node_type_id": "i3.xlarge",
        "num_workers": 4,
        "spark_env_vars": {
          "AWS_ACCESS_KEY_ID": "%%ak%%",
          "AWS_SECRET_ACCESS_KEY": "%%sk%%"
        }
      }
    }
  ],
  "tasks": [
    {
      "task_key": "refresh",
      "job_cluster_key": "main",
      "notebook_task": { "notebook_path": "/Repos/data/pipelines/silver/refresh" }
    }
  ]
}
""", ak=akid(), sk=aws_secret())
    return "cfg", "ops/databricks/.databrickscfg", T("""
[DEFAULT]
host  = https://adb-%%n%%.%%d%%.azuredatabricks.net
token = %%t%%

[staging]
host  = https://adb-%%n2%%.%%d%%.azuredatabricks.net
token = %%t2%%
""", n=rs(DG, 16), n2=rs(DG, 16), d=R.randint(1, 19), t=dapi(), t2=dapi())


def s_spark_storage_keys(i):
    v = i % 3
    if v == 0:
        return "conf", "spark/conf/spark-defaults.conf", T("""
spark.master                          k8s://https://kubernetes.default.svc
spark.kubernetes.namespace            spark-jobs
spark.executor.instances              6
spark.executor.memory                 8g
spark.sql.extensions                  io.delta.sql.DeltaSparkSessionExtension
spark.sql.catalog.spark_catalog       org.apache.spark.sql.delta.catalog.DeltaCatalog
spark.hadoop.fs.s3a.endpoint          https://minio.storage.svc:9000
spark.hadoop.fs.s3a.path.style.access true
spark.hadoop.fs.s3a.access.key        %%ak%%
spark.hadoop.fs.s3a.secret.key        %%sk%%
spark.eventLog.enabled                true
spark.eventLog.dir                    s3a://spark-history/events
""", ak=rs(UP + DG, 20), sk=rs(AN, 40))
    if v == 1:
        return "py", "jobs/compact_events.py", T("""
from pyspark.sql import SparkSession

ACCOUNT = "st%%o%%lake"

spark = (
    SparkSession.builder.appName("compact-events")
    .config("spark.sql.shuffle.partitions", "200")
    .getOrCreate()
)
spark.conf.set(
    f"fs.azure.account.key.{ACCOUNT}.dfs.core.windows.net",
    "%%k%%",
)

src = f"abfss://raw@{ACCOUNT}.dfs.core.windows.net/events/"
dst = f"abfss://curated@{ACCOUNT}.dfs.core.windows.net/events_compacted/"

(spark.read.parquet(src)
    .repartition("event_date")
    .write.mode("overwrite")
    .partitionBy("event_date")
    .parquet(dst))
""", o=org(), k=azure_key())
    return "xml", "hadoop/etc/hadoop/core-site.xml", T("""
<?xml version="1.0" encoding="UTF-8"?>
<?xml-stylesheet type="text/xsl" href="configuration.xsl"?>
<configuration>
  <property>
    <name>fs.defaultFS</name>
    <value>s3a://%%o%%-warehouse</value>
  </property>
  <property>
    <name>fs.s3a.aws.credentials.provider</name>
    <value>org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider</value>
  </property>
  <property>
    <name>fs.s3a.access.key</name>
    <value>%%ak%%</value>
  </property>
  <property>
    <name>fs.s3a.secret.key</name>
    <value>%%sk%%</value>
  </property>
  <property>
    <name>fs.s3a.connection.maximum</name>
    <value>200</value>
  </property>
</configuration>
""", o=org(), ak=akid(), sk=aws_secret())


def s_kafka_sasl_secret(i):
    k, s = confluent_key(), confluent_secret()
    v = i % 4
    if v == 0:
        return "properties", "config/ccloud-client.properties", T("""
# Confluent Cloud cluster lkc-%%c%%
bootstrap.servers=pkc-%%b%%.%%r%%.aws.confluent.cloud:9092
security.protocol=SASL_SSL
sasl.mechanisms=PLAIN
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username\\="%%k%%" password\\="%%s%%";
client.dns.lookup=use_all_dns_ips
session.timeout.ms=45000
acks=all
""", c=rs(LO + DG, 5), b=rs(LO + DG, 5), r=region(), k=k, s=s)
    if v == 1:
        return "java", "src/main/java/com/%s/events/ProducerFactory.java" % jorg(), T("""
package com.%%o%%.events;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringSerializer;

import java.util.Properties;

public final class ProducerFactory {
    private static final String BOOTSTRAP = "b-1.%%s%%-msk.%%c%%.c3.kafka.%%r%%.amazonaws.com:9096";

    private ProducerFactory() {}

    public static KafkaProducer<String, String> create() {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BOOTSTRAP);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put("security.protocol", "SASL_SSL");
        props.put("sasl.mechanism", "SCRAM-SHA-512");
        props.put("sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required "
                        + "username=\\"%%s%%-producer\\" password=\\"%%pw%%\\";");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        return new KafkaProducer<>(props);
    }
}
""", o=LAST_ORG[0], s=svc(), c=rs(LO + DG, 6), r=region(), pw=human_pw())
    if v == 2:
        return "py", "consumers/settings.py", T("""
import os

KAFKA_TOPIC = os.getenv("KAFKA_TOPIC", "orders.v1")

CONSUMER_CONFIG = {
    "bootstrap.servers": "pkc-%%b%%.europe-west3.gcp.confluent.cloud:9092",
    "security.protocol": "SASL_SSL",
    "sasl.mechanisms": "PLAIN",
    "sasl.username": "%%k%%",
    "sasl.password": "%%s%%",
    "group.id": "warehouse-loader",
    "auto.offset.reset": "earliest",
    "enable.auto.commit": False,
}

SCHEMA_REGISTRY = {
    "url": "https://psrc-%%p%%.europe-west3.gcp.confluent.cloud",
    "basic.auth.user.info": "%%k2%%:%%s2%%",
}
""", b=rs(LO + DG, 5), k=k, s=s, p=rs(LO + DG, 5), k2=confluent_key(), s2=confluent_secret())
    return "yml", "src/main/resources/application-prod.yml", T("""
spring:
  application:
    name: %%s%%-stream
  kafka:
    bootstrap-servers: kafka-0.kafka.internal:9093,kafka-1.kafka.internal:9093
    properties:
      security.protocol: SASL_SSL
      sasl.mechanism: SCRAM-SHA-256
      sasl.jaas.config: >-
        org.apache.kafka.common.security.scram.ScramLoginModule required
        username="%%s%%-stream"
        password="%%pw%%";
    consumer:
      group-id: %%s%%-stream
      auto-offset-reset: latest
management:
  endpoints.web.exposure.include: health,prometheus
""", s=svc(), pw=strong_pw())


def s_amqp_url_credentials(i):
    v = i % 3
    if v == 0:
        return "py", "worker/celeryconfig.py", T("""
broker_url = "amqps://%%s%%_worker:%%pw%%@b-%%u%%.mq.%%r%%.amazonaws.com:5671/%%s%%"
result_backend = "redis://redis-%%s%%.cache.internal:6379/1"
task_serializer = "json"
accept_content = ["json"]
timezone = "UTC"
task_acks_late = True
worker_prefetch_multiplier = 1
task_routes = {
    "worker.tasks.export_*": {"queue": "exports"},
}
""", s=svc(), pw=human_pw(), u=uuid(), r=region())
    if v == 1:
        return "conf", "rabbitmq/rabbitmq.conf", T("""
listeners.tcp.default = 5672
management.tcp.port = 15672
default_vhost = /
default_user = %%o%%_admin
default_pass = %%pw%%
default_permissions.configure = .*
default_permissions.read = .*
default_permissions.write = .*
cluster_formation.peer_discovery_backend = rabbit_peer_discovery_k8s
vm_memory_high_watermark.relative = 0.6
""", o=org(), pw=strong_pw())
    return "yaml", "helm/values-prod.yaml", T("""
replicaCount: 3
image:
  repository: ghcr.io/%%o%%/%%s%%-consumer
  tag: 2.14.1
env:
  - name: AMQP_URL
    value: "amqp://consumer:%%pw%%@rabbitmq.messaging.svc.cluster.local:5672/%%s%%"
  - name: PREFETCH
    value: "50"
resources:
  limits:
    memory: 512Mi
""", o=org(), s=svc(), pw=alnum_pw(24))


def s_nats_creds_seed(i):
    v = i % 3
    seed = nkey_seed("U")
    if v == 0:
        tokjwt = jwt({"typ": "JWT", "alg": "ed25519-nkey"},
                     {"jti": rs(B32, 52), "iat": R.randint(1700000000, 1730000000), "iss": nkey_pub("A"),
                      "name": svc() + "-ingest", "sub": nkey_pub("U"),
                      "nats": {"pub": {}, "sub": {}, "subs": -1, "data": -1, "payload": -1, "type": "user", "version": 2}})
        return "creds", "deploy/nats/%s.creds" % svc(), T("""
-----BEGIN NATS USER JWT-----
%%j%%
------END NATS USER JWT------

************************* IMPORTANT *************************
NKEY Seed printed below can be used to sign and prove identity.
NKEYs are sensitive and should be treated as secrets.

-----BEGIN USER NKEY SEED-----
%%seed%%
------END USER NKEY SEED------

*************************************************************
""", j=tokjwt, seed=seed)
    if v == 1:
        return "go", "pkg/bus/nkey.go", T("""
package bus

import (
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// service identity for the telemetry fan-out
const telemetrySeed = "%%seed%%"

func connectTelemetry(url string) (*nats.Conn, error) {
	kp, err := nkeys.FromSeed([]byte(telemetrySeed))
	if err != nil {
		return nil, err
	}
	pub, _ := kp.PublicKey()
	return nats.Connect(url, nats.Nkey(pub, func(nonce []byte) ([]byte, error) {
		return kp.Sign(nonce)
	}))
}
""", seed=seed)
    return "yaml", "k8s/telemetry/nats-auth-secret.yaml", T("""
apiVersion: v1
kind: Secret
metadata:
  name: telemetry-nats-seed
  namespace: telemetry
type: Opaque
stringData:
  seed.nk: %%seed%%
""", seed=seed)


def s_migration_tool_password(i):
    v = i % 4
    s = svc()
    if v == 0:
        return "conf", "db/flyway.conf", T("""
flyway.url=jdbc:postgresql://%%s%%-db.prod.internal:5432/%%s%%
flyway.user=%%s%%_migrator
flyway.password=%%pw%%
flyway.schemas=public,audit
flyway.locations=filesystem:db/migration
flyway.baselineOnMigrate=true
flyway.validateMigrationNaming=true
""", s=s, pw=human_pw())
    if v == 1:
        return "properties", "src/main/resources/liquibase.properties", T("""
changeLogFile=db/changelog/db.changelog-master.yaml
url=jdbc\\:mysql\\://%%s%%-mysql.prod.internal\\:3306/%%s%%?useSSL\\=true
username=liquibase
password=%%pw%%
driver=com.mysql.cj.jdbc.Driver
liquibase.hub.mode=off
""", s=s, pw=strong_pw().replace("=", "\\=").replace(":", "\\:"))
    if v == 2:
        return "gradle", "build.gradle", T("""
plugins {
    id 'java'
    id 'org.flywaydb.flyway' version '10.15.0'
}

repositories { mavenCentral() }

dependencies {
    runtimeOnly 'org.postgresql:postgresql:42.7.3'
}

flyway {
    url = 'jdbc:postgresql://localhost:15432/%%s%%'   // via ssm port-forward to prod
    user = 'flyway'
    password = '%%pw%%'
    schemas = ['%%s%%']
    cleanDisabled = true
}
""", s=s, pw=human_pw())
    return "xml", "pom.xml", T("""
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.%%o%%</groupId>
  <artifactId>%%s%%-schema</artifactId>
  <version>1.8.0</version>
  <properties>
    <db.url>jdbc:sqlserver://sql-%%s%%.database.windows.net:1433;databaseName=%%s%%</db.url>
    <db.username>schema_owner</db.username>
    <db.password>%%pw%%</db.password>
  </properties>
  <build>
    <plugins>
      <plugin>
        <groupId>org.liquibase</groupId>
        <artifactId>liquibase-maven-plugin</artifactId>
        <version>4.28.0</version>
        <configuration>
          <url>${db.url}</url>
          <username>${db.username}</username>
          <password>${db.password}</password>
          <changeLogFile>db/changelog/master.xml</changeLogFile>
        </configuration>
      </plugin>
    </plugins>
  </build>
</project>
""", o=org(), s=s, pw=strong_pw().replace("&", "").replace("<", ""))


def s_db_client_conf_password(i):
    v = i % 4
    s = svc()
    if v == 0:
        return "conf", "ops/pg_service.conf", T("""
# psql "service=%%s%%_ro"
[%%s%%_ro]
host=%%s%%-replica.db.internal
port=5432
dbname=%%s%%
user=readonly
password=%%pw%%
sslmode=verify-full
sslrootcert=/etc/ssl/certs/rds-global-bundle.pem

[%%s%%_admin]
host=%%s%%-primary.db.internal
port=5432
dbname=%%s%%
user=postgres
sslmode=verify-full
""", s=s, pw=human_pw())
    if v == 1:
        return "pgpass", "scripts/backup/.pgpass", T("""
# hostname:port:database:username:password
%%s%%-primary.db.internal:5432:%%s%%:backup_agent:%%pw%%
%%s%%-replica.db.internal:5432:*:backup_agent:%%pw%%
""", s=s, pw=strong_pw().replace(":", ""))
    if v == 2:
        return "cnf", "mysql/conf.d/client.cnf", T("""
[client]
host     = %%s%%-mysql.prod.internal
port     = 3306
user     = ops_readonly
password = "%%pw%%"
ssl-mode = REQUIRED
default-character-set = utf8mb4

[mysqldump]
single-transaction
quick
max_allowed_packet = 512M
""", s=s, pw=human_pw())
    return "cnf", "ansible/roles/mysql/files/my.cnf", T("""
[mysqld]
bind-address            = 0.0.0.0
server-id               = %%id%%
log_bin                 = /var/lib/mysql/mysql-bin.log
binlog_format           = ROW
innodb_buffer_pool_size = 12G
max_connections         = 800

[client]
user=root
password=%%pw%%
socket=/var/run/mysqld/mysqld.sock
""", id=R.randint(2, 40), pw=alnum_pw(18))


def s_seed_plaintext_credential(i):
    v = i % 3
    if v == 0:
        return "sql", "db/seeds/002_integrations.sql", T("""
-- integration credentials for the billing reconciler
INSERT INTO integrations (id, provider, display_name, api_key, enabled, created_at)
VALUES
  ('%%u1%%', 'stripe',   'Stripe (live)', '%%sk%%', true, now()),
  ('%%u2%%', 'sendgrid', 'SendGrid',      '%%sg%%', true, now()),
  ('%%u3%%', 'webhook',  'Ops webhook',   NULL, false, now())
ON CONFLICT (id) DO NOTHING;
""", u1=uuid(), u2=uuid(), u3=uuid(), sk=stripe_sk(), sg=sendgrid())
    if v == 1:
        return "py", "scripts/seed_staging.py", T("""
\"\"\"Populate the staging database with a superuser and the analytics service account.\"\"\"
from app.db import SessionLocal
from app.models import ServiceAccount, User
from app.security import hash_password

ADMIN_EMAIL = "platform-admin@%%o%%.com"
ADMIN_PASSWORD = "%%pw%%"


def main():
    db = SessionLocal()
    if not db.query(User).filter_by(email=ADMIN_EMAIL).first():
        db.add(User(email=ADMIN_EMAIL, password_hash=hash_password(ADMIN_PASSWORD), is_superuser=True))
    db.add(ServiceAccount(name="metabase", api_token="%%tok%%"))
    db.commit()


if __name__ == "__main__":
    main()
""", o=org(), pw=human_pw(), tok=rs(AN, 40))
    return "js", "db/seeds/01_partners.js", T("""
exports.seed = async function (knex) {
  await knex('partner_endpoints').del();
  await knex('partner_endpoints').insert([
    {
      partner: 'fulfilment-co',
      url: 'https://api.fulfilment-co.com/v2/notify',
      basic_auth: '%%o%%:%%pw%%',
      signing_secret: '%%h%%',
    },
    {
      partner: 'carrier-x',
      url: 'https://hooks.carrier-x.io/inbound',
      basic_auth: null,
      signing_secret: '%%h2%%',
    },
  ]);
};
""", o=org(), pw=human_pw(), h=hexs(48), h2=hexs(48))

def s_alertmanager_receiver(i):
    v = i % 3
    if v == 0:
        return "yml", "monitoring/alertmanager/alertmanager.yml", T("""
global:
  resolve_timeout: 5m
  slack_api_url: '%%hook%%'

route:
  receiver: data-platform
  group_by: ['alertname', 'cluster']
  group_wait: 30s
  repeat_interval: 4h
  routes:
    - matchers: ['severity="critical"']
      receiver: pagerduty-data

receivers:
  - name: data-platform
    slack_configs:
      - channel: '#data-alerts'
        send_resolved: true
        title: '{{ .CommonLabels.alertname }}'
  - name: pagerduty-data
    pagerduty_configs:
      - routing_key: %%pd%%
        severity: critical
""", hook=slack_hook(), pd=pagerduty_key())
    if v == 1:
        return "yaml", "charts/monitoring/values.yaml", T("""
kube-prometheus-stack:
  alertmanager:
    config:
      global:
        smtp_smarthost: 'smtp.sendgrid.net:587'
        smtp_from: 'alerts@%%o%%.com'
        smtp_auth_username: 'apikey'
        smtp_auth_password: '%%sg%%'
      route:
        receiver: email-oncall
      receivers:
        - name: email-oncall
          email_configs:
            - to: 'oncall@%%o%%.com'
""", o=org(), sg=sendgrid())
    return "yml", "alertmanager/config.yml", T("""
route:
  receiver: opsgenie
receivers:
  - name: opsgenie
    opsgenie_configs:
      - api_key: %%k%%
        api_url: https://api.eu.opsgenie.com/
        priority: '{{ if eq .CommonLabels.severity "critical" }}P1{{ else }}P3{{ end }}'
  - name: teams
    webhook_configs:
      - url: '%%t%%'
""", k=uuid(), t=teams_hook())


def s_grafana_provisioning_secret(i):
    v = i % 4
    if v == 0:
        return "yaml", "grafana/provisioning/datasources/warehouse.yaml", T("""
apiVersion: 1
datasources:
  - name: Warehouse
    type: postgres
    uid: %%uid%%
    url: warehouse.%%o%%.internal:5432
    user: grafana_ro
    jsonData:
      database: analytics
      sslmode: require
      postgresVersion: 1500
    secureJsonData:
      password: '%%pw%%'
  - name: Prometheus
    type: prometheus
    url: http://prometheus-operated.monitoring:9090
    isDefault: true
""", uid=rs(LO + DG, 14), o=org(), pw=human_pw())
    if v == 1:
        return "ini", "grafana/grafana.ini", T("""
[server]
root_url = https://grafana.%%o%%.net

[security]
admin_user = admin
admin_password = %%pw%%
cookie_secure = true

[auth.generic_oauth]
enabled = true
name = Keycloak
client_id = grafana
client_secret = %%cs%%
scopes = openid email profile
auth_url = https://sso.%%o%%.net/realms/ops/protocol/openid-connect/auth
token_url = https://sso.%%o%%.net/realms/ops/protocol/openid-connect/token
""", o=org(), pw=strong_pw(), cs=rs(AN, 32))
    if v == 2:
        return "yaml", "provisioning/alerting/contactpoints.yaml", T("""
apiVersion: 1
contactPoints:
  - orgId: 1
    name: ops-telegram
    receivers:
      - uid: %%u%%
        type: telegram
        settings:
          bottoken: "%%bt%%"
          chatid: "-100%%chat%%"
""", u=rs(LO + DG, 14), bt="%d:AA%s" % (R.randint(6000000000, 7999999999), rs(AN + "-_", 33)), chat=rs(DG, 10))
    return "py", "scripts/sync_dashboards.py", T("""
import json
import pathlib

import requests

GRAFANA_URL = "https://%%o%%.grafana.net"
SA_TOKEN = "%%t%%"


def push(path: pathlib.Path) -> None:
    dash = json.loads(path.read_text())
    r = requests.post(
        f"{GRAFANA_URL}/api/dashboards/db",
        headers={"Authorization": f"Bearer {SA_TOKEN}"},
        json={"dashboard": dash, "overwrite": True, "folderUid": "data-platform"},
        timeout=15,
    )
    r.raise_for_status()


for p in sorted(pathlib.Path("dashboards").glob("*.json")):
    push(p)
""", o=org(), t=grafana_sa())


def s_apm_agent_key(i):
    v = i % 4
    if v == 0:
        return "yaml", "datadog/datadog.yaml", T("""
api_key: %%k%%
site: datadoghq.com
hostname_fqdn: true
tags:
  - env:prod
  - team:data-platform
logs_enabled: true
apm_config:
  enabled: true
  env: prod
process_config:
  process_collection:
    enabled: true
""", k=dd_api())
    if v == 1:
        return "yml", "config/newrelic.yml", T("""
common: &default_settings
  license_key: '%%k%%'
  app_name: %%s%%-api
  distributed_tracing:
    enabled: true
  log_level: info

production:
  <<: *default_settings

staging:
  <<: *default_settings
  app_name: %%s%%-api (staging)
""", k=nr_license(), s=svc())
    if v == 2:
        return "yaml", "helm/datadog-values.yaml", T("""
datadog:
  apiKey: %%k%%
  appKey: %%a%%
  clusterName: data-prod-eks
  logs:
    enabled: true
    containerCollectAll: true
  kubeStateMetricsCore:
    enabled: true
clusterAgent:
  enabled: true
  metricsProvider:
    enabled: true
""", k=dd_api(), a=dd_app())
    return "ini", ".sentryclirc", T("""
[defaults]
url = https://sentry.io/
org = %%o%%
project = %%s%%-pipelines

[auth]
token = %%t%%
""", o=org(), s=svc(), t=sentry_user_token())


def s_otel_exporter_auth(i):
    v = i % 3
    if v == 0:
        return "yaml", "otel/collector-config.yaml", T("""
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 0.0.0.0:4317
      http:
        endpoint: 0.0.0.0:4318

processors:
  batch:
    timeout: 5s
  memory_limiter:
    check_interval: 1s
    limit_mib: 1500

exporters:
  otlp/honeycomb:
    endpoint: api.honeycomb.io:443
    headers:
      x-honeycomb-team: %%k%%

service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [memory_limiter, batch]
      exporters: [otlp/honeycomb]
""", k=rs(AN, 22))
    if v == 1:
        inst = str(R.randint(100000, 999999))
        basic = b64s(inst + ":" + grafana_cloud())
        return "yaml", "deploy/otelcol/config.yaml", T("""
extensions:
  health_check: {}

exporters:
  otlphttp/grafana_cloud:
    endpoint: https://otlp-gateway-prod-eu-west-2.grafana.net/otlp
    headers:
      Authorization: "Basic %%b%%"

service:
  extensions: [health_check]
  pipelines:
    metrics:
      receivers: [otlp, hostmetrics]
      processors: [batch]
      exporters: [otlphttp/grafana_cloud]
""", b=basic)
    return "yaml", "collector/gateway.yaml", T("""
extensions:
  basicauth/elastic:
    client_auth:
      username: otel_writer
      password: "%%pw%%"

exporters:
  otlphttp/newrelic:
    endpoint: https://otlp.nr-data.net
    headers:
      api-key: %%k%%
  elasticsearch:
    endpoints: [https://logs.%%o%%.internal:9200]
    auth:
      authenticator: basicauth/elastic

service:
  extensions: [basicauth/elastic]
  pipelines:
    logs:
      receivers: [otlp]
      exporters: [elasticsearch]
    traces:
      receivers: [otlp]
      exporters: [otlphttp/newrelic]
""", pw=human_pw(), k=nr_license(), o=org())


def s_prometheus_scrape_auth(i):
    v = i % 3
    if v == 0:
        return "yml", "prometheus/prometheus.yml", T("""
global:
  scrape_interval: 30s
  external_labels:
    cluster: data-prod

scrape_configs:
  - job_name: airflow-statsd
    static_configs:
      - targets: ['statsd-exporter.airflow:9102']

remote_write:
  - url: https://prometheus-prod-24-prod-eu-west-2.grafana.net/api/prom/push
    basic_auth:
      username: "%%u%%"
      password: "%%p%%"
    queue_config:
      max_samples_per_send: 2000
""", u=R.randint(1000000, 1999999), p=grafana_cloud())
    if v == 1:
        return "yaml", "monitoring/prometheus/scrape-external.yaml", T("""
scrape_configs:
  - job_name: 'kafka-connect'
    scheme: https
    metrics_path: /metrics
    authorization:
      type: Bearer
      credentials: %%t%%
    static_configs:
      - targets: ['connect.%%o%%.internal:8443']
  - job_name: 'rabbitmq'
    basic_auth:
      username: prometheus
      password: %%pw%%
    static_configs:
      - targets: ['rabbitmq.messaging:15692']
""", t=rs(AN, 48), o=org(), pw=human_pw())
    return "yml", "victoria/vmagent.yml", T("""
global:
  scrape_interval: 15s
scrape_configs:
  - job_name: cloudflare
    static_configs:
      - targets: ['cf-exporter:8080']
  - job_name: clickhouse
    basic_auth:
      username: monitoring
      password: '%%pw%%'
    static_configs:
      - targets: ['clickhouse-0.analytics:9363', 'clickhouse-1.analytics:9363']
""", pw=strong_pw())


def s_k8s_secret_base64(i):
    v = i % 3
    if v == 0:
        pw = human_pw()
        return "yaml", "k8s/airflow/secret-metadata.yaml", T("""
apiVersion: v1
kind: Secret
metadata:
  name: airflow-metadata
  namespace: airflow
  labels:
    app.kubernetes.io/part-of: airflow
type: Opaque
data:
  connection: %%c%%
  fernet-key: %%f%%
""", c=b64s("postgresql://airflow:%s@airflow-pg.airflow.svc:5432/airflow" % pw),
                 f=b64s(base64.urlsafe_b64encode(rbytes(32)).decode()))
    if v == 1:
        return "yaml", "deploy/kafka-connect/secret.yaml", T("""
apiVersion: v1
kind: Secret
metadata:
  name: debezium-source-credentials
  namespace: kafka
type: Opaque
data:
  username: %%u%%
  password: %%p%%
""", u=b64s("debezium"), p=b64s(strong_pw()))
    return "yaml", "clusters/prod/monitoring/grafana-admin.yaml", T("""
---
apiVersion: v1
kind: Secret
metadata:
  name: grafana-admin
  namespace: monitoring
data:
  admin-user: YWRtaW4=
  admin-password: %%p%%
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: grafana-env
  namespace: monitoring
data:
  GF_SERVER_ROOT_URL: https://grafana.%%o%%.net
""", p=b64s(human_pw()), o=org())


def s_gcp_sa_key(i):
    o = org()
    proj = "%s-%s-%d" % (o, pick(["data", "platform", "analytics"]), R.randint(100, 999))
    key = pem_rsa_private()
    sa = {
        "type": "service_account",
        "project_id": proj,
        "private_key_id": hexs(40),
        "private_key": key + "\n",
        "client_email": "%s@%s.iam.gserviceaccount.com" % (pick(["terraform", "composer-runner", "bq-loader"]), proj),
        "client_id": rs(DG, 21),
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
        "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
        "universe_domain": "googleapis.com",
    }
    v = i % 3
    if v == 0:
        return "json", "terraform/gcp/credentials.json", json.dumps(sa, indent=2) + "\n"
    if v == 1:
        return "tf", "terraform/gcp/provider.tf", T("""
provider "google" {
  project     = "%%p%%"
  region      = "europe-west1"
  credentials = <<-EOF
%%j%%
  EOF
}
""", p=proj, j=json.dumps(sa, indent=2))
    return "py", "composer/dags/utils/gcs_client.py", T("""
from google.cloud import storage
from google.oauth2 import service_account

_SA_INFO = %%j%%


def client() -> storage.Client:
    creds = service_account.Credentials.from_service_account_info(_SA_INFO)
    return storage.Client(project=_SA_INFO["project_id"], credentials=creds)
""", j=json.dumps(sa, indent=4))


def s_private_key_in_config(i):
    v = i % 3
    if v == 0:
        key = pem_rsa_private(pkcs8=False)
        return "tf", "modules/legacy-etl/provision.tf", T("""
resource "null_resource" "install_agent" {
  triggers = {
    instance_id = aws_instance.etl.id
  }

  connection {
    type        = "ssh"
    host        = aws_instance.etl.private_ip
    user        = "ec2-user"
    private_key = <<-KEY
%%k%%
KEY
  }

  provisioner "remote-exec" {
    inline = ["sudo yum install -y amazon-cloudwatch-agent"]
  }
}
""", k=key)
    if v == 1:
        key = pem_rsa_private()
        ind = "\n".join("        " + l for l in key.split("\n"))
        return "yml", "dbt/profiles.yml", T("""
snowflake_keypair:
  target: prod
  outputs:
    prod:
      type: snowflake
      account: %%acct%%
      user: DBT_SVC
      private_key: |
%%k%%
      role: TRANSFORMER
      database: ANALYTICS
      warehouse: TRANSFORM_WH
      schema: PUBLIC
      threads: 8
""", acct=rs(LO, 7) + "-" + rs(LO + DG, 7), k=ind)
    key = pem_rsa_private()
    return "properties", "config/kafka-mtls.properties", T("""
bootstrap.servers=kafka.%%o%%.internal:9094
security.protocol=SSL
ssl.keystore.type=PEM
ssl.keystore.certificate.chain=%%cert%%
ssl.keystore.key=%%key%%
ssl.truststore.type=PEM
ssl.truststore.location=/etc/kafka/ca.pem
""", o=org(), cert=pem_cert().replace("\n", " \\\n  "), key=key.replace("\n", " \\\n  "))

def s_pipeline_integration_test(i):
    v = i % 3
    if v == 0:
        return "py", "tests/integration/test_snowflake_load.py", T("""
import pytest
import snowflake.connector

from loader.snowflake import load_batch

CONN_ARGS = dict(
    account="%%acct%%",
    user="LOADER_IT",
    password="%%pw%%",
    warehouse="LOADING_WH",
    database="RAW_STAGING",
    schema="IT",
)


@pytest.fixture(scope="module")
def conn():
    c = snowflake.connector.connect(**CONN_ARGS)
    yield c
    c.close()


def test_load_batch_roundtrip(conn, tmp_path):
    rows = [{"id": 1, "amount": 10.5}, {"id": 2, "amount": 3.0}]
    load_batch(conn, "IT_ORDERS", rows)
    cur = conn.cursor().execute("select count(*) from IT_ORDERS")
    assert cur.fetchone()[0] >= 2
""", acct=rs(LO, 7) + "-" + rs(LO + DG, 7), pw=human_pw())
    if v == 1:
        return "java", "src/test/java/com/%s/stream/OrderTopologyIT.java" % jorg(), T("""
package com.%%o%%.stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

class OrderTopologyIT {

    private static final String STAGING_BOOTSTRAP = "kafka-staging.%%o%%.internal:9093";
    private static Properties props;

    @BeforeAll
    static void setUp() {
        props = new Properties();
        props.put("bootstrap.servers", STAGING_BOOTSTRAP);
        props.put("security.protocol", "SASL_SSL");
        props.put("sasl.mechanism", "SCRAM-SHA-512");
        props.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required "
                + "username=\\"it-runner\\" password=\\"%%pw%%\\";");
    }

    @Test
    void enrichesOrders() {
        OrderTopology topology = new OrderTopology(props);
        assertThat(topology.describe().subtopologies()).hasSize(2);
    }
}
""", o=LAST_ORG[0], pw=strong_pw())
    return "ts", "test/e2e/ingest.spec.ts", T("""
import { describe, it, expect } from 'vitest';
import { IngestClient } from '../../src/client';

const client = new IngestClient({
  baseUrl: 'https://ingest.staging.%%o%%.dev',
  apiKey: 'ik_%%k%%',
});

describe('ingest e2e', () => {
  it('accepts a batch of events', async () => {
    const res = await client.send([{ type: 'page_view', ts: Date.now() }]);
    expect(res.accepted).toBe(1);
  });
});
""", o=org(), k=rs(AN, 40))


def s_app_signing_keys(i):
    v = i % 3
    if v == 0:
        return "cfg", "airflow/airflow.cfg", T("""
[core]
dags_folder = /opt/airflow/dags
executor = KubernetesExecutor
load_examples = False
fernet_key = %%f%%

[webserver]
base_url = https://airflow.%%o%%.net
secret_key = %%sk%%
expose_config = False

[logging]
remote_logging = True
remote_base_log_folder = s3://%%o%%-airflow-logs
""", f=base64.urlsafe_b64encode(rbytes(32)).decode(), o=org(), sk=hexs(32))
    if v == 1:
        return "py", "superset/superset_config.py", T("""
import os

ROW_LIMIT = 50000
SUPERSET_WEBSERVER_PORT = 8088

SECRET_KEY = "%%sk%%"
SQLALCHEMY_DATABASE_URI = os.environ.get(
    "SUPERSET_DB_URI", "postgresql+psycopg2://superset:superset@superset-db:5432/superset"
)

FEATURE_FLAGS = {
    "ENABLE_TEMPLATE_PROCESSING": True,
    "DASHBOARD_RBAC": True,
}
CACHE_CONFIG = {"CACHE_TYPE": "RedisCache", "CACHE_REDIS_URL": "redis://superset-redis:6379/0"}
""", sk=b64(42))
    pw = human_pw()
    return "py", "pipelines/common/db.py", T("""
import sqlalchemy as sa

# encoded so it does not show up in plain greps of the repo
_PW = bytes.fromhex("%%h%%").decode()

ENGINE = sa.create_engine(
    f"mssql+pyodbc://etl_reader:{_PW}@sql-%%s%%.%%o%%.local:1433/%%s%%?driver=ODBC+Driver+18+for+SQL+Server",
    pool_pre_ping=True,
)
""", h=pw.encode().hex(), s=svc(), o=org())

# ---------------------------------------------------------------- none classes


def n_tfvars_secret_refs(i):
    s = svc()
    v = i % 3
    if v == 0:
        return "tfvars", "envs/prod/terraform.tfvars", T("""
aws_region   = "%%r%%"
environment  = "prod"
service_name = "%%s%%"

db_instance_class         = "db.r6g.xlarge"
db_master_username        = "%%s%%_admin"
db_password_secret_arn    = "%%arn%%"
db_password_rotation_days = 30
kms_key_id                = "%%kms%%"

api_key_header   = "X-Api-Key"
token_url        = "https://auth.%%o%%.com/oauth2/token"
secret_name      = "%%s%%/prod/app"
password_length  = 32
""", r=region(), s=s, arn=sm_arn(s + "/prod/db"), kms=kms_arn(), o=org())
    if v == 1:
        return "tf", "variables.tf", T("""
variable "db_password" {
  description = "Master password for the warehouse. Supplied via TF_VAR_db_password in CI."
  type        = string
  sensitive   = true
}

variable "datadog_api_key" {
  description = "Datadog API key (from the ci/datadog secret)"
  type        = string
  sensitive   = true
  default     = null
}

variable "slack_webhook_secret_id" {
  type    = string
  default = "projects/%%o%%-ops/secrets/slack-webhook/versions/latest"
}

variable "password_policy" {
  type = object({
    min_length        = number
    require_symbols   = bool
  })
  default = {
    min_length      = 16
    require_symbols = true
  }
}
""", o=org())
    return "tfvars", "stacks/%s/secrets.auto.tfvars" % s, T("""
# Only references. Values live in Secrets Manager / SSM.
secrets = {
  DATABASE_URL   = "arn:aws:ssm:%%r%%:%%a%%:parameter/%%s%%/prod/DATABASE_URL"
  STRIPE_API_KEY = "%%arn1%%"
  SENTRY_DSN     = "arn:aws:ssm:%%r%%:%%a%%:parameter/%%s%%/prod/SENTRY_DSN"
}

secret_key_id       = "%%kid%%"
access_key_rotation = "90d"
""", r=region(), a=acct(), s=s, arn1=sm_arn(s + "/stripe"), kid=uuid())


def n_tf_generated_secrets(i):
    v = i % 3
    if v == 0:
        return "tf", "modules/rds/main.tf", T("""
resource "random_password" "master" {
  length           = 32
  special          = true
  override_special = "!#$%^&*()-_=+"
}

resource "aws_db_instance" "this" {
  identifier          = var.name
  engine              = "postgres"
  engine_version      = "16.3"
  instance_class      = var.instance_class
  allocated_storage   = 100
  username            = "postgres"
  password            = random_password.master.result
  storage_encrypted   = true
  kms_key_id          = var.kms_key_arn
  skip_final_snapshot = false
}

resource "aws_secretsmanager_secret_version" "master" {
  secret_id     = aws_secretsmanager_secret.master.id
  secret_string = jsonencode({ username = "postgres", password = random_password.master.result })
}
""")
    if v == 1:
        return "tf", "aurora.tf", T("""
resource "aws_rds_cluster" "analytics" {
  cluster_identifier          = "analytics-%%env%%"
  engine                      = "aurora-postgresql"
  engine_version              = "15.4"
  master_username             = "analytics"
  manage_master_user_password = true
  master_user_secret_kms_key_id = "%%kms%%"
  db_subnet_group_name        = aws_db_subnet_group.analytics.name
  vpc_security_group_ids      = [aws_security_group.analytics.id]
}

output "master_user_secret_arn" {
  value = aws_rds_cluster.analytics.master_user_secret[0].secret_arn
}
""", env=pick(["prod", "staging"]), kms=kms_arn())
    return "tf", "iam_ci_user.tf", T("""
resource "aws_iam_user" "ci" {
  name = "ci-deployer"
}

resource "aws_iam_access_key" "ci" {
  user    = aws_iam_user.ci.name
  pgp_key = "keybase:%%o%%_ops"
}

output "ci_access_key_id" {
  value = aws_iam_access_key.ci.id
}

output "ci_secret_access_key_encrypted" {
  value = aws_iam_access_key.ci.encrypted_secret
}

data "aws_secretsmanager_secret_version" "github_token" {
  secret_id = "ci/github-token"
}
""", o=org())


def n_tf_lockfile(i):
    provs = [("hashicorp/aws", "5.%d.0" % R.randint(30, 70)), ("hashicorp/random", "3.6.%d" % R.randint(0, 3)),
             ("hashicorp/google", "5.%d.0" % R.randint(10, 40)), ("cloudflare/cloudflare", "4.%d.0" % R.randint(20, 40)),
             ("datadog/datadog", "3.%d.0" % R.randint(30, 45)), ("hashicorp/kubernetes", "2.%d.0" % R.randint(20, 32))]
    chosen = R.sample(provs, R.randint(2, 3))
    blocks = []
    for p, ver in chosen:
        hashes = ['    "h1:%s",' % b64(32)] + ['    "zh:%s",' % hexs(64) for _ in range(R.randint(5, 9))]
        blocks.append('provider "registry.terraform.io/%s" {\n  version     = "%s"\n  constraints = "~> %s"\n  hashes = [\n%s\n  ]\n}\n'
                      % (p, ver, ver.rsplit(".", 1)[0], "\n".join(hashes)))
    text = "# This file is maintained automatically by \"terraform init\".\n# Manual edits may be lost in future updates.\n\n" + "\n".join(blocks)
    return "hcl", pick(["", "infra/", "stacks/%s/" % svc()]) + ".terraform.lock.hcl", text


def n_pulumi_encrypted_config(i):
    s = svc()
    v = i % 3
    if v == 0:
        return "yaml", "infra/Pulumi.prod.yaml", T("""
encryptionsalt: v1:%%salt%%:v1:%%n%%:%%c%%
config:
  aws:region: %%r%%
  %%s%%:dbUser: %%s%%
  %%s%%:dbPassword:
    secure: v1:%%n1%%:%%c1%%
  %%s%%:stripeKey:
    secure: v1:%%n2%%:%%c2%%
  %%s%%:minReplicas: "2"
""", salt=b64(9), n=b64(12), c=b64(32), r=region(), s=s, n1=b64(12), c1=b64(40), n2=b64(12), c2=b64(60))
    if v == 1:
        return "yaml", "Pulumi.staging.yaml", T("""
secretsprovider: awskms://alias/pulumi-%%s%%?region=%%r%%
encryptedkey: %%ek%%
config:
  gcp:project: %%o%%-staging
  %%s%%:apiToken:
    secure: %%ct%%
  %%s%%:tokenUrl: https://auth.staging.%%o%%.com/token
""", s=s, r=region(), ek=b64(184), o=org(), ct=b64(90))
    return "ts", "infra/index.ts", T("""
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import * as gcp from "@pulumi/gcp";

const cfg = new pulumi.Config();
const dbPassword = cfg.requireSecret("dbPassword");
const adminToken = new random.RandomPassword("admin-token", { length: 40, special: false });

const instance = new gcp.sql.DatabaseInstance("%%s%%", {
    databaseVersion: "POSTGRES_16",
    settings: { tier: "db-custom-2-7680" },
});

new gcp.sql.User("app", { instance: instance.name, name: "app", password: dbPassword });
new gcp.secretmanager.SecretVersion("admin-token", {
    secret: "projects/%%o%%-prod/secrets/admin-token",
    secretData: adminToken.result,
});

export const connectionName = instance.connectionName;
""", s=s, o=org())


def n_cdk_secret_refs(i):
    v = i % 3
    if v == 0:
        return "ts", "lib/pipeline-stack.ts", T("""
import { Stack, StackProps, SecretValue } from 'aws-cdk-lib';
import * as codepipeline from 'aws-cdk-lib/aws-codepipeline';
import * as actions from 'aws-cdk-lib/aws-codepipeline-actions';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';

const GITHUB_TOKEN_SECRET = 'ci/github-token';
const API_KEY_HEADER = 'X-Api-Key';

export class PipelineStack extends Stack {
  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const source = new codepipeline.Artifact();
    const partner = secretsmanager.Secret.fromSecretNameV2(this, 'Partner', '%%s%%/partner-api');

    new actions.GitHubSourceAction({
      actionName: 'Source',
      owner: '%%o%%',
      repo: '%%s%%',
      oauthToken: SecretValue.secretsManager(GITHUB_TOKEN_SECRET, { jsonField: 'token' }),
      output: source,
    });
    partner.grantRead;
    void API_KEY_HEADER;
  }
}
""", s=svc(), o=org())
    if v == 1:
        return "py", "stacks/db_stack.py", T("""
from aws_cdk import Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_rds as rds
from aws_cdk import aws_ssm as ssm
from constructs import Construct


class DbStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs) -> None:
        super().__init__(scope, construct_id, **kwargs)
        vpc = ec2.Vpc.from_lookup(self, "Vpc", vpc_id="vpc-%%vpc%%")
        self.cluster = rds.DatabaseCluster(
            self,
            "Cluster",
            engine=rds.DatabaseClusterEngine.aurora_postgres(version=rds.AuroraPostgresEngineVersion.VER_15_4),
            credentials=rds.Credentials.from_generated_secret("%%s%%_admin", secret_name="%%s%%/db/master"),
            writer=rds.ClusterInstance.provisioned("writer"),
            vpc=vpc,
        )
        self.api_secret_param = ssm.StringParameter.value_for_string_parameter(self, "/%%s%%/api/secret-arn")
""", vpc=hexs(17), s=svc())
    return "java", "src/main/java/com/%s/cdk/QueueStack.java" % jorg(), T("""
package com.%%o%%.cdk;

import software.amazon.awscdk.SecretValue;
import software.amazon.awscdk.Stack;
import software.amazon.awscdk.services.secretsmanager.Secret;
import software.amazon.awscdk.services.secretsmanager.SecretStringGenerator;
import software.constructs.Construct;

public class QueueStack extends Stack {
    public static final String PASSWORD_KEY = "password";
    public static final String SECRET_NAME = "%%s%%/mq/credentials";

    public QueueStack(final Construct scope, final String id) {
        super(scope, id);
        Secret creds = Secret.Builder.create(this, "MqCredentials")
                .secretName(SECRET_NAME)
                .generateSecretString(SecretStringGenerator.builder()
                        .secretStringTemplate("{\\"username\\":\\"%%s%%\\"}")
                        .generateStringKey(PASSWORD_KEY)
                        .excludePunctuation(true)
                        .passwordLength(32)
                        .build())
                .build();
        SecretValue pw = creds.secretValueFromJson(PASSWORD_KEY);
    }
}
""", o=LAST_ORG[0], s=svc())


def n_cfn_dynamic_refs(i):
    v = i % 3
    if v == 0:
        return "yaml", "cloudformation/warehouse.yaml", T("""
AWSTemplateFormatVersion: '2010-09-09'
Parameters:
  MasterPassword:
    Type: String
    NoEcho: true
    Description: Supplied by the deploy pipeline from Secrets Manager
  ApiKeyHeaderName:
    Type: String
    Default: X-API-Key

Resources:
  Cluster:
    Type: AWS::Redshift::Cluster
    Properties:
      ClusterType: multi-node
      NumberOfNodes: 2
      NodeType: ra3.xlplus
      DBName: warehouse
      MasterUsername: admin
      MasterUserPassword: !Ref MasterPassword
      KmsKeyId: %%kms%%
      Encrypted: true
""", kms=kms_arn())
    if v == 1:
        return "yaml", "templates/etl-db.yaml", T("""
Resources:
  DBSecret:
    Type: AWS::SecretsManager::Secret
    Properties:
      Name: etl/db/master
      GenerateSecretString:
        SecretStringTemplate: '{"username": "etl"}'
        GenerateStringKey: password
        PasswordLength: 30
        ExcludeCharacters: '"@/\\'
  DB:
    Type: AWS::RDS::DBInstance
    Properties:
      Engine: postgres
      DBInstanceClass: db.t4g.large
      AllocatedStorage: '50'
      MasterUsername: '{{resolve:secretsmanager:etl/db/master:SecretString:username}}'
      MasterUserPassword: '{{resolve:secretsmanager:etl/db/master:SecretString:password}}'
  Fn:
    Type: AWS::Lambda::Function
    Properties:
      Runtime: python3.12
      Handler: app.handler
      Role: arn:aws:iam::%%a%%:role/etl-fn
      Code: { S3Bucket: artifacts-%%a%%, S3Key: 'etl/%%sha%%.zip' }
      Environment:
        Variables:
          TOKEN_PARAM: '{{resolve:ssm-secure:/etl/api-token:3}}'
""", a=acct(), sha=gitsha())
    return "json", "cfn/kinesis-firehose.json", T("""
{
  "Resources": {
    "DeliveryStream": {
      "Type": "AWS::KinesisFirehose::DeliveryStream",
      "Properties": {
        "DeliveryStreamType": "DirectPut",
        "HttpEndpointDestinationConfiguration": {
          "EndpointConfiguration": {
            "Name": "datadog-logs",
            "Url": "https://aws-kinesis-http-intake.logs.datadoghq.com/v1/input",
            "AccessKey": "{{resolve:secretsmanager:%%arn%%:SecretString:api_key}}"
          },
          "RequestConfiguration": { "ContentEncoding": "GZIP" },
          "S3Configuration": {
            "BucketARN": "arn:aws:s3:::%%o%%-firehose-backup",
            "RoleARN": "arn:aws:iam::%%a%%:role/firehose-backup"
          }
        }
      }
    }
  }
}
""", arn=sm_arn("datadog/api-key"), o=org(), a=acct())


def n_bicep_keyvault_refs(i):
    v = i % 3
    if v == 0:
        return "bicep", "infra/main.bicep", T("""
param location string = resourceGroup().location
param keyVaultName string = 'kv-%%o%%-prod'

resource kv 'Microsoft.KeyVault/vaults@2023-07-01' existing = {
  name: keyVaultName
}

module sql './modules/sql.bicep' = {
  name: 'sql'
  params: {
    location: location
    administratorLogin: 'sqladmin'
    administratorLoginPassword: kv.getSecret('sql-admin-password')
  }
}
""", o=org())
    if v == 1:
        return "bicepparam", "infra/main.prod.bicepparam", T("""
using './main.bicep'

param environmentName = 'prod'
param location = 'northeurope'
param postgresAdminLogin = 'pgadmin'
param postgresAdminPassword = az.getSecret('%%sub%%', 'rg-shared-secrets', 'kv-%%o%%-shared', 'postgres-admin-password')
param tenantId = '%%t%%'
""", sub=uuid(), o=org(), t=uuid())
    return "bicep", "modules/sql.bicep", T("""
param location string
param administratorLogin string

@secure()
@description('Passed in from Key Vault by the parent template')
param administratorLoginPassword string

param jobSeed string = newGuid()

resource server 'Microsoft.Sql/servers@2023-05-01-preview' = {
  name: 'sql-${uniqueString(resourceGroup().id)}'
  location: location
  properties: {
    administratorLogin: administratorLogin
    administratorLoginPassword: administratorLoginPassword
  }
}

output passwordSecretUri string = 'https://kv-shared.vault.azure.net/secrets/sql-admin-password'
""")


def n_lambda_secret_fetch(i):
    v = i % 3
    if v == 0:
        return "py", "functions/ingest/handler.py", T("""
import json
import os
from functools import lru_cache

import boto3

SECRET_ARN = os.environ["PARTNER_SECRET_ARN"]
API_KEY_HEADER = "x-api-key"
TOKEN_URL = "https://auth.partner.example.net/oauth2/token"

_sm = boto3.client("secretsmanager")


@lru_cache(maxsize=1)
def partner_credentials():
    resp = _sm.get_secret_value(SecretId=SECRET_ARN)
    return json.loads(resp["SecretString"])


def handler(event, context):
    creds = partner_credentials()
    headers = {API_KEY_HEADER: creds["api_key"]}
    return {"statusCode": 200, "body": json.dumps({"headers": sorted(headers)})}
""")
    if v == 1:
        return "ts", "src/handlers/report.ts", T("""
import { SSMClient, GetParameterCommand } from '@aws-sdk/client-ssm';

const ssm = new SSMClient({});
const PARAM_NAME = process.env.DB_PASSWORD_PARAM ?? '/%%s%%/prod/db-password';
let cached: string | undefined;

async function dbPassword(): Promise<string> {
  if (!cached) {
    const out = await ssm.send(new GetParameterCommand({ Name: PARAM_NAME, WithDecryption: true }));
    cached = out.Parameter?.Value;
  }
  return cached!;
}

export const handler = async () => {
  const password = await dbPassword();
  return { statusCode: 200, body: JSON.stringify({ ok: password.length > 0 }) };
};
""", s=svc())
    return "go", "cmd/exporter/main.go", T("""
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

const (
	secretIDEnv   = "DD_API_KEY_SECRET_ARN"
	apiKeyHeader  = "DD-API-KEY"
	intakeURL     = "https://http-intake.logs.datadoghq.eu/api/v2/logs"
)

func apiKey(ctx context.Context) (string, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return "", err
	}
	out, err := secretsmanager.NewFromConfig(cfg).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{
		SecretId: &[]string{os.Getenv(secretIDEnv)}[0],
	})
	if err != nil {
		return "", err
	}
	return *out.SecretString, nil
}

func main() { lambda.Start(func(ctx context.Context) error { _, err := apiKey(ctx); return err }) }
""")

def n_moto_dummy_creds(i):
    v = i % 3
    if v == 0:
        return "py", "tests/conftest.py", T("""
import os

import boto3
import pytest
from moto import mock_aws


@pytest.fixture(autouse=True)
def aws_credentials():
    \"\"\"Mocked AWS credentials for moto - not real.\"\"\"
    os.environ["AWS_ACCESS_KEY_ID"] = "testing"
    os.environ["AWS_SECRET_ACCESS_KEY"] = "testing"
    os.environ["AWS_SECURITY_TOKEN"] = "testing"
    os.environ["AWS_SESSION_TOKEN"] = "testing"
    os.environ["AWS_DEFAULT_REGION"] = "us-east-1"


@pytest.fixture
def s3(aws_credentials):
    with mock_aws():
        client = boto3.client("s3")
        client.create_bucket(Bucket="%%o%%-landing-test")
        yield client
""", o=org())
    if v == 1:
        return "yml", "docker-compose.test.yml", T("""
services:
  localstack:
    image: localstack/localstack:3.5
    ports: ["4566:4566"]
    environment:
      SERVICES: s3,sqs,secretsmanager
  tests:
    build: .
    depends_on: [localstack]
    environment:
      AWS_ENDPOINT_URL: http://localstack:4566
      AWS_ACCESS_KEY_ID: test          # localstack accepts any value
      AWS_SECRET_ACCESS_KEY: test
      AWS_REGION: us-east-1
      DATABASE_URL: postgres://postgres:postgres@db:5432/test
  db:
    image: postgres:16-alpine
    environment:
      POSTGRES_PASSWORD: postgres
""")
    return "py", "tests/unit/test_notify.py", T("""
from functions.notify import handler

# Dummy values for unit tests only; the Slack client is mocked below.
FAKE_SLACK_TOKEN = "xoxb-fake-token-for-tests"
FAKE_WEBHOOK = "https://hooks.slack.com/services/TFAKE/BFAKE/not-a-real-webhook"


def test_handler_posts_message(monkeypatch):
    sent = []
    monkeypatch.setattr(handler, "SLACK_BOT_TOKEN", FAKE_SLACK_TOKEN)
    monkeypatch.setattr(handler.urllib.request, "urlopen", lambda req, timeout: sent.append(req) or _Resp())
    handler.handler({"Records": [{"body": '{"pipeline": "p", "task": "t"}'}]}, None)
    assert sent[0].headers["Authorization"] == "Bearer " + FAKE_SLACK_TOKEN


class _Resp:
    status = 200

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False
""")


def n_wrangler_bindings(i):
    name = pick(["edge-api", "img-resizer", "webhook-relay", "geo-router", "ab-router"])
    v = i % 3
    if v == 0:
        return "toml", "wrangler.toml", T("""
name = "%%n%%"
main = "src/index.ts"
compatibility_date = "2024-10-11"
account_id = "%%acc%%"

# Secrets are set with `wrangler secret put UPSTREAM_TOKEN` and never committed.

[vars]
ENVIRONMENT = "production"
API_KEY_HEADER = "X-Edge-Key"
TURNSTILE_SITE_KEY = "0x4AAAAAAA%%ts%%"

[[kv_namespaces]]
binding = "SESSIONS"
id = "%%kv%%"
preview_id = "%%kv2%%"

[[d1_databases]]
binding = "DB"
database_name = "%%n%%-prod"
database_id = "%%d1%%"
""", n=name, acc=hexs(32), ts=rs(AN + "-_", 14), kv=hexs(32), kv2=hexs(32), d1=uuid())
    if v == 1:
        return "toml", "workers/%s/wrangler.toml" % name, T("""
name = "%%n%%"
main = "src/worker.ts"
compatibility_date = "2024-08-01"
compatibility_flags = ["nodejs_compat"]

[[r2_buckets]]
binding = "ASSETS"
bucket_name = "%%n%%-assets"

[[queues.producers]]
queue = "%%n%%-events"
binding = "EVENTS"

[[hyperdrive]]
binding = "HYPERDRIVE"
id = "%%hd%%"

[env.staging]
vars = { LOG_LEVEL = "debug", SECRET_NAME = "UPSTREAM_TOKEN" }
""", n=name, hd=hexs(32))
    return "ts", "src/index.ts", T("""
export interface Env {
  UPSTREAM_TOKEN: string; // wrangler secret
  SESSIONS: KVNamespace;
  ENVIRONMENT: string;
}

const TOKEN_HEADER = 'Authorization';
const CACHE_KEY_PREFIX = 'v3:%%ck%%:';

export default {
  async fetch(req: Request, env: Env): Promise<Response> {
    const url = new URL(req.url);
    const cacheKey = CACHE_KEY_PREFIX + url.pathname;
    const hit = await env.SESSIONS.get(cacheKey);
    if (hit) return new Response(hit, { headers: { 'x-cache': 'HIT' } });
    const upstream = await fetch('https://origin.internal' + url.pathname, {
      headers: { [TOKEN_HEADER]: `Bearer ${env.UPSTREAM_TOKEN}` },
    });
    return upstream;
  },
};
""", ck=hexs(12))


def n_frontend_public_env(i):
    v = i % 3
    if v == 0:
        return "toml", "netlify.toml", T("""
[build]
  command = "pnpm build"
  publish = "build"

# Client-side values only: these are embedded in the browser bundle by design.
[build.environment]
  VITE_STRIPE_PUBLISHABLE_KEY = "%%pk%%"
  VITE_POSTHOG_KEY = "phc_%%ph%%"
  VITE_API_URL = "https://api.%%o%%.com"

# STRIPE_SECRET_KEY is configured in the Netlify UI (Site settings > Environment variables)
""", pk=stripe_pk(), ph=rs(AN, 43), o=org())
    if v == 1:
        return "json", "vercel.json", T("""
{
  "framework": "nextjs",
  "env": {
    "NEXT_PUBLIC_ALGOLIA_APP_ID": "%%app%%",
    "NEXT_PUBLIC_ALGOLIA_SEARCH_KEY": "%%k%%",
    "NEXT_PUBLIC_MAPBOX_TOKEN": "pk.%%mb1%%.%%mb2%%"
  },
  "headers": [
    { "source": "/(.*)", "headers": [{ "key": "X-Frame-Options", "value": "DENY" }] }
  ]
}
""", app=rs(UP + DG, 10), k=hexs(32), mb1=base64.urlsafe_b64encode(json.dumps({"u": org() + "-web", "a": "cl" + rs(LO + DG, 23)}, separators=(",", ":")).encode()).decode().rstrip("="), mb2=rs(AN + "-_", 22))
    return "env", "apps/dashboard/.env.production", T("""
# Public, browser-exposed configuration (NEXT_PUBLIC_*). No server secrets here.
NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY=%%pk%%
NEXT_PUBLIC_GOOGLE_CLIENT_ID=%%gid%%-%%g2%%.apps.googleusercontent.com
NEXT_PUBLIC_SEGMENT_WRITE_KEY=%%seg%%
NEXT_PUBLIC_API_BASE=https://api.%%o%%.com/v2
""", pk=stripe_pk(), gid=rs(DG, 12), g2=rs(LO + DG, 32), seg=rs(AN, 32), o=org())


def n_firebase_web_config(i):
    proj = "%s-%s" % (org(), pick(["web", "app", "analytics"]))
    key = "AIza" + rs(AN + "-_", 35)
    v = i % 3
    if v == 0:
        return "ts", "src/lib/firebase.ts", T("""
import { initializeApp } from 'firebase/app';
import { getAnalytics } from 'firebase/analytics';

// Firebase web config is public by design; access is enforced by security rules and App Check.
const firebaseConfig = {
  apiKey: '%%k%%',
  authDomain: '%%p%%.firebaseapp.com',
  projectId: '%%p%%',
  storageBucket: '%%p%%.appspot.com',
  messagingSenderId: '%%ms%%',
  appId: '1:%%ms%%:web:%%app%%',
  measurementId: 'G-%%mid%%',
};

export const app = initializeApp(firebaseConfig);
export const analytics = getAnalytics(app);
""", k=key, p=proj, ms=rs(DG, 12), app=hexs(22), mid=rs(UP + DG, 10))
    if v == 1:
        return "js", "public/js/store-locator.js", T("""
// Browser key, restricted by HTTP referrer to https://*.%%o%%.com/* and to the
// Maps JavaScript API only (see GCP console > Credentials). Safe to ship to clients.
const MAPS_BROWSER_KEY = '%%k%%';

export function loadMaps() {
  const s = document.createElement('script');
  s.src = `https://maps.googleapis.com/maps/api/js?key=${MAPS_BROWSER_KEY}&libraries=places&callback=initMap`;
  s.async = true;
  document.head.appendChild(s);
}
""", o=org(), k=key)
    return "json", "web/firebase-config.json", T("""
{
  "_comment": "Client SDK config for the public web app. Not a secret; see firebase.google.com/docs/projects/api-keys",
  "apiKey": "%%k%%",
  "authDomain": "%%p%%.firebaseapp.com",
  "projectId": "%%p%%",
  "appId": "1:%%ms%%:web:%%app%%"
}
""", k=key, p=proj, ms=rs(DG, 12), app=hexs(22))


def n_airflow_env_templates(i):
    v = i % 3
    if v == 0:
        return "yaml", "deploy/airflow/docker-compose.yaml", T("""
x-airflow-common: &airflow-common
  image: apache/airflow:2.9.3
  env_file: .env
  environment:
    AIRFLOW__CORE__EXECUTOR: LocalExecutor
    AIRFLOW__CORE__FERNET_KEY: ${AIRFLOW_FERNET_KEY:?set in .env}
    AIRFLOW__DATABASE__SQL_ALCHEMY_CONN: postgresql+psycopg2://airflow:${AIRFLOW_DB_PASSWORD}@postgres/airflow
    AIRFLOW_CONN_WAREHOUSE: postgresql://etl:${WAREHOUSE_PASSWORD}@warehouse:5432/analytics
    AIRFLOW__WEBSERVER__SECRET_KEY_CMD: cat /run/secrets/airflow_webserver_key

services:
  scheduler:
    <<: *airflow-common
    command: scheduler
    secrets: [airflow_webserver_key]

secrets:
  airflow_webserver_key:
    file: ./secrets/webserver_key
""")
    if v == 1:
        return "cfg", "airflow/airflow.cfg", T("""
[core]
executor = CeleryKubernetesExecutor
fernet_key =
# fernet key is injected via AIRFLOW__CORE__FERNET_KEY_SECRET

[secrets]
backend = airflow.providers.amazon.aws.secrets.secrets_manager.SecretsManagerBackend
backend_kwargs = {"connections_prefix": "airflow/connections", "variables_prefix": "airflow/variables", "region_name": "%%r%%"}

[webserver]
secret_key_secret = airflow/config/webserver_secret_key
authenticate = True
""", r=region())
    return "env", "airflow/.env.example", T("""
# Copy to .env and fill in. Never commit the real file.
AIRFLOW_UID=50000
AIRFLOW_FERNET_KEY=<generate with: python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())">
AIRFLOW_DB_PASSWORD=changeme
WAREHOUSE_PASSWORD=
AIRFLOW_CONN_SALESFORCE_API='{"conn_type": "http", "login": "your-user@example.com", "password": "<your-password>", "extra": {"security_token": "<token>"}}'
""")


def n_airflow_dag_hooks(i):
    v = i % 3
    if v == 0:
        return "py", "dags/partner_sync.py", T("""
from datetime import datetime

from airflow import DAG
from airflow.models import Variable
from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
from airflow.providers.cncf.kubernetes.secret import Secret

api_token = Secret(deploy_type="env", deploy_target="PARTNER_API_TOKEN", secret="partner-sync", key="token")
db_password = Secret(deploy_type="env", deploy_target="DB_PASSWORD", secret="warehouse-writer", key="password")

with DAG("partner_sync", start_date=datetime(2024, 1, 1), schedule="15 * * * *", catchup=False) as dag:
    KubernetesPodOperator(
        task_id="sync",
        name="partner-sync",
        namespace="pipelines",
        image="ghcr.io/%%o%%/partner-sync@sha256:%%d%%",
        secrets=[api_token, db_password],
        env_vars={"PAGE_SIZE": Variable.get("partner_page_size", default_var="500")},
        get_logs=True,
    )
""", o=org(), d=hexs(64))
    if v == 1:
        return "py", "dags/export_to_sftp.py", T("""
import pendulum
from airflow.decorators import dag, task
from airflow.hooks.base import BaseHook
from airflow.providers.sftp.hooks.sftp import SFTPHook

TOKEN_VARIABLE = "export_signing_token"


@dag(schedule="@daily", start_date=pendulum.datetime(2024, 2, 1, tz="UTC"), catchup=False, tags=["export"])
def export_to_sftp():
    @task
    def push(ds=None):
        conn = BaseHook.get_connection("partner_sftp")
        hook = SFTPHook(ssh_conn_id=conn.conn_id)
        hook.store_file(f"/inbound/orders_{ds}.csv", f"/tmp/orders_{ds}.csv")

    push()


export_to_sftp()
""")
    return "py", "plugins/hooks/vault_helpers.py", T("""
import hvac
from airflow.models import Variable

VAULT_ADDR = "https://vault.%%o%%.internal:8200"
SECRET_PATH = "kv/data/pipelines/%%s%%"
ROLE_ID_VAR = "vault_role_id"


def read_pipeline_secret(key: str) -> str:
    client = hvac.Client(url=VAULT_ADDR)
    client.auth.approle.login(
        role_id=Variable.get(ROLE_ID_VAR),
        secret_id=Variable.get("vault_secret_id"),
    )
    data = client.secrets.kv.v2.read_secret_version(path=SECRET_PATH.split("kv/data/")[1])
    return data["data"]["data"][key]
""", o=org(), s=svc())


def n_dbt_env_vars(i):
    v = i % 3
    if v == 0:
        return "yml", "profiles.yml", T("""
analytics:
  target: "{{ env_var('DBT_TARGET', 'dev') }}"
  outputs:
    dev:
      type: postgres
      host: localhost
      user: "{{ env_var('DBT_USER') }}"
      password: "{{ env_var('DBT_ENV_SECRET_PASSWORD') }}"
      port: 5432
      dbname: analytics
      schema: "dbt_{{ env_var('USER') }}"
      threads: 4
    prod:
      type: postgres
      host: "{{ env_var('DBT_HOST') }}"
      user: dbt_prod
      password: "{{ env_var('DBT_ENV_SECRET_PASSWORD') }}"
      port: 5432
      dbname: analytics
      schema: marts
      threads: 8
""")
    if v == 1:
        return "yml", "transform/profiles.yml", T("""
snowflake:
  target: prod
  outputs:
    prod:
      type: snowflake
      account: "{{ env_var('SNOWFLAKE_ACCOUNT') }}"
      user: DBT_SVC
      authenticator: snowflake_jwt
      private_key_path: /secrets/snowflake/rsa_key.p8
      private_key_passphrase: "{{ env_var('DBT_ENV_SECRET_KEY_PASSPHRASE') }}"
      role: TRANSFORMER
      database: ANALYTICS
      warehouse: TRANSFORM_WH
      schema: PUBLIC
""")
    return "yml", "dbt/profiles.yml", T("""
bq:
  target: prod
  outputs:
    prod:
      type: bigquery
      method: oauth
      project: %%o%%-analytics
      dataset: dbt_prod
      threads: 16
      impersonate_service_account: dbt-runner@%%o%%-analytics.iam.gserviceaccount.com
    ci:
      type: bigquery
      method: service-account
      keyfile: "{{ env_var('GOOGLE_APPLICATION_CREDENTIALS') }}"
      project: %%o%%-analytics-ci
      dataset: "pr_{{ env_var('PR_NUMBER', 'local') }}"
""", o=org())


def n_dbt_package_lock(i):
    v = i % 2
    if v == 0:
        return "yml", "package-lock.yml", T("""
packages:
  - package: dbt-labs/dbt_utils
    version: 1.%%a%%.0
  - package: calogica/dbt_expectations
    version: 0.10.%%b%%
  - package: calogica/dbt_date
    version: 0.10.1
  - git: https://github.com/%%o%%/dbt-shared-macros.git
    revision: %%sha%%
sha1_hash: %%h%%
""", a=R.randint(1, 3), b=R.randint(1, 4), o=org(), sha=gitsha(), h=hexs(40))
    models = []
    for m in R.sample(["stg_orders", "stg_customers", "fct_revenue", "dim_accounts", "int_payments"], 3):
        models.append('    "model.analytics.%s": {\n      "checksum": {"name": "sha256", "checksum": "%s"},\n      "unique_id": "model.analytics.%s"\n    }' % (m, hexs(64), m))
    return "json", "target/partial_manifest.json", T("""
{
  "metadata": {
    "dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json",
    "dbt_version": "1.8.4",
    "invocation_id": "%%u%%",
    "project_hash_id": "%%ph%%",
    "user_id": "%%uid%%",
    "send_anonymous_usage_stats": false
  },
  "nodes": {
%%m%%
  }
}
""", u=uuid(), ph=hexs(32), uid=uuid(), m=",\n".join(models))


def n_databricks_secret_scope(i):
    v = i % 3
    if v == 0:
        return "py", "notebooks/silver/orders_merge.py", T("""
# Databricks notebook source
# MAGIC %md
# MAGIC Merge orders into silver. Credentials come from the `pipelines` secret scope.

# COMMAND ----------

jdbc_password = dbutils.secrets.get(scope="pipelines", key="orders-db-password")
storage_key = dbutils.secrets.get(scope="pipelines", key="lake-storage-key")
spark.conf.set("fs.azure.account.key.st%%o%%lake.dfs.core.windows.net", storage_key)

# COMMAND ----------

orders = (spark.read.format("jdbc")
          .option("url", "jdbc:sqlserver://sql-orders.database.windows.net:1433;database=orders")
          .option("dbtable", "dbo.orders")
          .option("user", "databricks_reader")
          .option("password", jdbc_password)
          .load())
orders.createOrReplaceTempView("orders_src")
""", o=org())
    if v == 1:
        return "json", "resources/jobs/orders_merge.json", T("""
{
  "job_id": %%jid%%,
  "settings": {
    "name": "orders_merge",
    "existing_cluster_id": "%%c1%%-%%c2%%-%%c3%%",
    "notebook_task": {
      "notebook_path": "/Repos/data/pipelines/notebooks/silver/orders_merge",
      "base_parameters": { "env": "prod" }
    },
    "spark_env_vars": {
      "PARTNER_API_TOKEN": "{{secrets/pipelines/partner-api-token}}",
      "AWS_SECRET_ACCESS_KEY": "{{secrets/aws/etl-secret-key}}"
    },
    "webhook_notifications": { "on_failure": [{ "id": "%%wh%%" }] }
  },
  "created_time": %%ct%%,
  "run_as_user_name": "svc-pipelines@%%o%%.com"
}
""", jid=R.randint(10**14, 10**15), c1=rs(DG, 4), c2=rs(DG, 6), c3=rs(LO + DG, 8), wh=uuid(), ct=R.randint(1700000000000, 1730000000000), o=org())
    return "yml", "databricks.yml", T("""
bundle:
  name: %%s%%-pipelines

workspace:
  host: https://%%o%%-prod.cloud.databricks.com

targets:
  prod:
    mode: production
    workspace:
      root_path: /Shared/.bundle/${bundle.name}/${bundle.target}
    run_as:
      service_principal_name: %%sp%%

resources:
  jobs:
    nightly:
      name: nightly-${bundle.target}
      tasks:
        - task_key: main
          existing_cluster_id: %%c%%
          spark_python_task:
            python_file: ../src/nightly.py
""", s=svc(), o=org(), sp=uuid(), c="%s-%s-%s" % (rs(DG, 4), rs(DG, 6), rs(LO + DG, 8)))


def n_kafka_config_providers(i):
    v = i % 3
    if v == 0:
        return "properties", "config/connect-distributed.properties", T("""
bootstrap.servers=kafka-0.kafka:9093,kafka-1.kafka:9093
group.id=connect-cluster
config.providers=file,env
config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider

security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
  username="${file:/opt/kafka/secrets/connect.properties:username}" \\
  password="${file:/opt/kafka/secrets/connect.properties:password}";

ssl.truststore.location=/opt/kafka/ssl/truststore.jks
# JDK default truststore password; the truststore only holds public CA certs
ssl.truststore.password=changeit
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
""")
    if v == 1:
        return "py", "consumers/settings.py", T("""
import os

CONSUMER_CONFIG = {
    "bootstrap.servers": os.environ["KAFKA_BOOTSTRAP"],
    "security.protocol": "SASL_SSL",
    "sasl.mechanisms": "PLAIN",
    "sasl.username": os.environ["KAFKA_API_KEY"],
    "sasl.password": os.environ["KAFKA_API_SECRET"],
    "group.id": "warehouse-loader",
}

SCHEMA_REGISTRY = {
    "url": os.environ["SCHEMA_REGISTRY_URL"],
    "basic.auth.user.info": "{}:{}".format(os.environ["SR_API_KEY"], os.environ["SR_API_SECRET"]),
}
PASSWORD_ENV_VAR = "KAFKA_API_SECRET"
""")
    return "json", "connectors/debezium-orders.json", T("""
{
  "name": "debezium-orders",
  "config": {
    "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
    "database.hostname": "orders-db.internal",
    "database.port": "5432",
    "database.user": "debezium",
    "database.password": "${secrets:kafka/debezium-orders:password}",
    "database.dbname": "orders",
    "topic.prefix": "orders",
    "plugin.name": "pgoutput",
    "slot.name": "debezium_orders",
    "publication.name": "dbz_orders",
    "snapshot.mode": "initial"
  }
}
""")


def n_rabbitmq_definitions(i):
    users = []
    for name in R.sample(["admin", "ingest", "exporter", "monitoring", "celery", "shipper"], R.randint(2, 3)):
        users.append('    {\n      "name": "%s",\n      "password_hash": "%s",\n      "hashing_algorithm": "rabbit_password_hashing_sha256",\n      "tags": ["%s"],\n      "limits": {}\n    }'
                     % (name, rabbit_hash(), "administrator" if name == "admin" else ("monitoring" if name == "monitoring" else "")))
    return "json", pick(["rabbitmq/definitions.json", "deploy/rabbitmq/definitions.json", "config/rabbit-definitions.json"]), T("""
{
  "rabbit_version": "3.13.%%v%%",
  "rabbitmq_version": "3.13.%%v%%",
  "users": [
%%u%%
  ],
  "vhosts": [{ "name": "/" }, { "name": "%%s%%" }],
  "permissions": [
    { "user": "admin", "vhost": "/", "configure": ".*", "write": ".*", "read": ".*" }
  ],
  "queues": [
    { "name": "%%s%%.events", "vhost": "%%s%%", "durable": true, "auto_delete": false, "arguments": { "x-queue-type": "quorum" } }
  ]
}
""", v=R.randint(1, 6), u=",\n".join(users), s=svc())


def n_nats_bcrypt_nkeys(i):
    v = i % 2
    if v == 0:
        return "conf", "nats/nats-server.conf", T("""
port: 4222
http_port: 8222
server_name: nats-%%n%%

authorization {
  users = [
    { user: ingest,   password: "%%b1%%", permissions: { publish: "events.>" } }
    { user: exporter, password: "%%b2%%", permissions: { subscribe: "events.>" } }
  ]
}

jetstream {
  store_dir: /data/jetstream
  max_file_store: 50G
}
""", n=R.randint(0, 2), b1=bcrypt(11), b2=bcrypt(11))
    return "conf", "deploy/nats/accounts.conf", T("""
accounts {
  TELEMETRY {
    jetstream: enabled
    users = [
      { nkey: %%u1%% }
      { nkey: %%u2%% }
    ]
  }
  SYS {
    users = [ { nkey: %%u3%% } ]
  }
}
system_account: SYS
# operator signing key (public): %%op%%
""", u1=nkey_pub("U"), u2=nkey_pub("U"), u3=nkey_pub("U"), op=nkey_pub("O"))

def n_migration_password_hashes(i):
    v = i % 4
    if v == 0:
        return "sql", "db/migration/V%d__seed_admin_user.sql" % R.randint(3, 40), T("""
-- Seed the initial admin. The hash is bcrypt (cost 12); the plaintext was
-- handed to the on-call lead and must be changed on first login.
INSERT INTO app_users (id, email, password_hash, role, must_change_password)
VALUES ('%%u%%', 'admin@%%o%%.com', '%%h%%', 'ADMIN', true);

INSERT INTO api_clients (id, name, client_secret_hash, scopes)
VALUES ('%%u2%%', 'reporting', '%%h2%%', '{reports:read}');
""", u=uuid(), o=org(), h=bcrypt(12), u2=uuid(), h2=argon2())
    if v == 1:
        return "sql", "migrations/20240%d1200_roles.up.sql" % R.randint(1, 9), T("""
-- Roles for the analytics replica. Password verifiers were generated with
-- `psql \\password` on a scratch instance; only the SCRAM verifier is stored.
CREATE ROLE metabase_ro LOGIN PASSWORD '%%s1%%';
CREATE ROLE dbt_runner LOGIN PASSWORD '%%s2%%';

GRANT USAGE ON SCHEMA marts TO metabase_ro;
GRANT SELECT ON ALL TABLES IN SCHEMA marts TO metabase_ro;
GRANT ALL ON SCHEMA staging TO dbt_runner;
""", s1=scram(), s2=scram())
    if v == 2:
        return "sql", "db/changes/0042_create_reporting_user.sql", T("""
-- MySQL 8: create the reporting user from its stored auth string so that the
-- plaintext never appears in the repository.
CREATE USER IF NOT EXISTS 'reporting'@'10.%' IDENTIFIED WITH mysql_native_password AS '%%h%%';
GRANT SELECT ON analytics.* TO 'reporting'@'10.%';

CREATE USER IF NOT EXISTS 'exporter'@'%' IDENTIFIED WITH mysql_native_password AS '%%h2%%';
GRANT PROCESS, REPLICATION CLIENT ON *.* TO 'exporter'@'%';
FLUSH PRIVILEGES;
""", h=mysql_native(), h2=mysql_native())
    return "py", "accounts/migrations/0007_seed_service_users.py", T("""
from django.db import migrations

SERVICE_USERS = [
    ("airflow", "%%p1%%"),
    ("metabase", "%%p2%%"),
]


def seed(apps, schema_editor):
    User = apps.get_model("accounts", "User")
    for username, password_hash in SERVICE_USERS:
        User.objects.update_or_create(username=username, defaults={"password": password_hash, "is_active": True})


class Migration(migrations.Migration):
    dependencies = [("accounts", "0006_user_is_service")]
    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
""", p1=pbkdf2_django(), p2=pbkdf2_django())


def n_liquibase_checksums(i):
    v = i % 3
    if v == 0:
        return "xml", "src/main/resources/db/changelog/changes/%03d-add-api-keys.xml" % R.randint(10, 90), T("""
<?xml version="1.0" encoding="UTF-8"?>
<databaseChangeLog
    xmlns="http://www.liquibase.org/xml/ns/dbchangelog"
    xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
    xsi:schemaLocation="http://www.liquibase.org/xml/ns/dbchangelog http://www.liquibase.org/xml/ns/dbchangelog/dbchangelog-4.20.xsd">

  <changeSet id="add-api-keys-table" author="platform">
    <validCheckSum>9:%%c1%%</validCheckSum>
    <createTable tableName="api_keys">
      <column name="id" type="uuid"><constraints primaryKey="true"/></column>
      <column name="key_prefix" type="varchar(12)"/>
      <column name="key_hash" type="char(64)"/>
      <column name="secret_name" type="varchar(128)"/>
      <column name="created_at" type="timestamptz" defaultValueComputed="now()"/>
    </createTable>
  </changeSet>

  <changeSet id="api-keys-prefix-index" author="platform">
    <validCheckSum>9:%%c2%%</validCheckSum>
    <createIndex tableName="api_keys" indexName="ix_api_keys_prefix">
      <column name="key_prefix"/>
    </createIndex>
  </changeSet>
</databaseChangeLog>
""", c1=hexs(32), c2=hexs(32))
    if v == 1:
        rows = []
        for n in range(1, R.randint(6, 9)):
            rows.append('"%d","%s","db/changelog/changes/%03d.yaml","2024-0%d-%02d 10:%02d:11","%d","EXECUTED","9:%s","createTable","","4.27.0"'
                        % (n, pick(["platform", "dbre", "jlee", "mk"]), n, R.randint(1, 9), R.randint(1, 28), R.randint(0, 59), n, hexs(32)))
        return "csv", "docs/db/databasechangelog-export.csv", '"ID","AUTHOR","FILENAME","DATEEXECUTED","ORDEREXECUTED","EXECTYPE","MD5SUM","DESCRIPTION","COMMENTS","LIQUIBASE"\n' + "\n".join(rows) + "\n"
    rows = []
    for n in range(1, R.randint(6, 10)):
        rows.append("| %d | %d | %-28s | SQL | V%d__%s.sql | %d |" % (n, n, pick(["create orders", "add api token table", "password reset tokens", "add secret refs", "index events"]), n, pick(["init", "tokens", "secrets", "keys", "events"]), R.randint(-2**31, 2**31 - 1)))
    return "md", "docs/runbooks/flyway-history.md", T("""
# Flyway history snapshot (prod, taken before the 2024-06 repair)

Used to compare checksums after `flyway repair`. Checksums are CRC32 of the script.

| installed_rank | version | description | type | script | checksum |
|---|---|---|---|---|---|
%%r%%
""", r="\n".join(rows))


def n_db_client_no_password(i):
    v = i % 3
    s = svc()
    if v == 0:
        return "conf", "ops/pg_service.conf", T("""
# Passwords are NOT stored here. psql reads them from ~/.pgpass (mode 0600),
# which is provisioned by the bastion bootstrap from Vault.
[%%s%%_ro]
host=%%s%%-replica.db.internal
port=5432
dbname=%%s%%
user=readonly
passfile=~/.pgpass
sslmode=verify-full
sslrootcert=/etc/ssl/certs/rds-global-bundle.pem

[%%s%%_iam]
host=%%s%%-primary.db.internal
port=5432
dbname=%%s%%
user=iam_%%s%%
# password is an RDS IAM auth token: aws rds generate-db-auth-token ...
sslmode=verify-full
""", s=s)
    if v == 1:
        return "cnf", "mysql/conf.d/client.cnf", T("""
[client]
host     = %%s%%-mysql.prod.internal
port     = 3306
user     = ops_readonly
# password comes from the login path: mysql_config_editor set --login-path=ops
ssl-mode = VERIFY_IDENTITY
ssl-ca   = /etc/mysql/certs/ca.pem

[mysqld]
validate_password.policy = STRONG
validate_password.length = 16
default_authentication_plugin = caching_sha2_password
""", s=s)
    return "yaml", "ansible/roles/postgres/defaults/main.yml", T("""
postgres_version: 16
postgres_port: 5432
postgres_password_encryption: scram-sha-256
postgres_admin_password: "{{ vault_postgres_admin_password }}"
postgres_users:
  - name: %%s%%
    password: "{{ lookup('community.hashi_vault.hashi_vault', 'secret=kv/data/db/%%s%%:password') }}"
  - name: replicator
    password: "{{ vault_replicator_password }}"
postgres_hba:
  - { type: hostssl, database: all, user: all, address: 10.0.0.0/8, method: scram-sha-256 }
""", s=s)


def n_alertmanager_file_refs(i):
    v = i % 3
    if v == 0:
        return "yml", "monitoring/alertmanager/alertmanager.yml", T("""
global:
  resolve_timeout: 5m
  slack_api_url_file: /etc/alertmanager/secrets/slack-webhook-url

route:
  receiver: data-platform
  routes:
    - matchers: ['severity="critical"']
      receiver: pagerduty

receivers:
  - name: data-platform
    slack_configs:
      - channel: '#data-alerts'
        send_resolved: true
  - name: pagerduty
    pagerduty_configs:
      - routing_key_file: /etc/alertmanager/secrets/pagerduty-routing-key
  - name: email
    email_configs:
      - to: oncall@%%o%%.com
        auth_username: alerts@%%o%%.com
        auth_password_file: /etc/alertmanager/secrets/smtp-password
""", o=org())
    if v == 1:
        return "txt", "docs/alertmanager-config-dump.txt", T("""
$ amtool config show --alertmanager.url=http://alertmanager.monitoring:9093
global:
  resolve_timeout: 5m
  http_config:
    follow_redirects: true
  smtp_hello: localhost
  smtp_require_tls: true
  slack_api_url: <secret>
  pagerduty_url: https://events.pagerduty.com/v2/enqueue
route:
  receiver: data-platform
receivers:
- name: data-platform
  slack_configs:
  - send_resolved: true
    api_url: <secret>
    channel: '#data-alerts'
- name: pagerduty
  pagerduty_configs:
  - routing_key: <secret>
""")
    return "yaml", "k8s/monitoring/alertmanagerconfig.yaml", T("""
apiVersion: monitoring.coreos.com/v1alpha1
kind: AlertmanagerConfig
metadata:
  name: data-platform
  namespace: monitoring
spec:
  route:
    receiver: slack
    groupBy: [alertname]
  receivers:
    - name: slack
      slackConfigs:
        - channel: '#data-alerts'
          apiURL:
            name: alertmanager-slack
            key: webhook-url
    - name: opsgenie
      opsgenieConfigs:
        - apiKey:
            name: alertmanager-opsgenie
            key: api-key
""")


def n_grafana_env_interpolation(i):
    v = i % 3
    if v == 0:
        return "yaml", "grafana/provisioning/datasources/warehouse.yaml", T("""
apiVersion: 1
datasources:
  - name: Warehouse
    type: postgres
    uid: %%uid%%
    url: $WAREHOUSE_HOST:5432
    user: grafana_ro
    jsonData:
      database: analytics
      sslmode: require
    secureJsonData:
      password: $__env{WAREHOUSE_PASSWORD}
  - name: Loki
    type: loki
    url: https://logs-prod-eu-west-0.grafana.net
    basicAuth: true
    basicAuthUser: "%%lu%%"
    secureJsonData:
      basicAuthPassword: $__file{/run/secrets/loki_token}
""", uid=rs(LO + DG, 14), lu=R.randint(100000, 999999))
    if v == 1:
        return "ini", "grafana/grafana.ini", T("""
[server]
root_url = https://grafana.%%o%%.net

[security]
admin_user = admin
admin_password = $__file{/etc/grafana/secrets/admin_password}
secret_key = $__env{GF_SECRET_KEY}

[auth.google]
enabled = true
client_id = %%gid%%-%%g2%%.apps.googleusercontent.com
client_secret = $__file{/etc/grafana/secrets/google_client_secret}
allowed_domains = %%o%%.com
""", o=org(), gid=rs(DG, 12), g2=rs(LO + DG, 32))
    panels = []
    for n in range(1, 4):
        panels.append('    {"id": %d, "type": "timeseries", "title": "%s", "datasource": {"type": "prometheus", "uid": "%s"}, "targets": [{"expr": "%s", "refId": "A"}]}'
                      % (n, pick(["Task failures", "DAG duration p95", "Token refresh errors", "Secret rotation age"]), rs(LO + DG, 9),
                         pick(["sum(rate(airflow_ti_failures[5m]))", "histogram_quantile(0.95, sum by (le) (rate(dag_duration_bucket[10m])))", "max(secret_age_seconds) by (secret_name)"])))
    return "json", "grafana/dashboards/pipelines.json", T("""
{
  "uid": "%%u%%",
  "title": "Pipelines overview",
  "version": %%ver%%,
  "schemaVersion": 39,
  "panels": [
%%p%%
  ]
}
""", u=rs(AN, 9), ver=R.randint(3, 60), p=",\n".join(panels))


def n_apm_env_refs(i):
    v = i % 3
    if v == 0:
        return "yaml", "datadog/datadog.yaml", T("""
api_key: ENC[datadog_api_key]
app_key: ENC[datadog_app_key]
secret_backend_command: /opt/datadog-agent/bin/secret-backend
secret_backend_arguments:
  - --vault-path=kv/data/observability/datadog
site: datadoghq.eu
tags:
  - env:prod
logs_enabled: true
""")
    if v == 1:
        return "yml", "config/newrelic.yml", T("""
common: &default_settings
  license_key: <%= ENV['NEW_RELIC_LICENSE_KEY'] %>
  app_name: <%= ENV.fetch('NEW_RELIC_APP_NAME', '%%s%%-api') %>
  distributed_tracing:
    enabled: true
  attributes:
    exclude:
      - request.headers.authorization
      - request.headers.x-api-key

production:
  <<: *default_settings
""", s=svc())
    return "yaml", "helm/datadog-values.yaml", T("""
datadog:
  apiKeyExistingSecret: datadog-credentials
  appKeyExistingSecret: datadog-credentials
  clusterName: data-prod-eks
  site: datadoghq.com
  logs:
    enabled: true
agents:
  image:
    tag: 7.55.2
    digest: sha256:%%d%%
""", d=hexs(64))


def n_sentry_public_dsn(i):
    v = i % 3
    dsn = "https://%s@o%d.ingest.%ssentry.io/%d" % (hexs(32), R.randint(100000, 4500000), pick(["", "us.", "de."]), R.randint(4500000000000000, 4509999999999999))
    if v == 0:
        return "ts", "src/instrument.ts", T("""
import * as Sentry from '@sentry/react';

// The DSN only allows sending events; it is public by design and ships in the bundle.
Sentry.init({
  dsn: '%%d%%',
  environment: import.meta.env.MODE,
  tracesSampleRate: 0.1,
  integrations: [Sentry.browserTracingIntegration()],
});
""", d=dsn)
    if v == 1:
        return "toml", "netlify.toml", T("""
[build]
  command = "npm run build"
  publish = ".next"

[build.environment]
  # client-side Sentry DSN (public)
  NEXT_PUBLIC_SENTRY_DSN = "%%d%%"
  SENTRY_ORG = "%%o%%"
  SENTRY_PROJECT = "web"
  # SENTRY_AUTH_TOKEN for source map upload is set in the Netlify UI
""", d=dsn, o=org())
    return "js", "sentry.client.config.js", T("""
import * as Sentry from '@sentry/nextjs';

Sentry.init({
  dsn: process.env.NEXT_PUBLIC_SENTRY_DSN || '%%d%%',
  replaysSessionSampleRate: 0.05,
  replaysOnErrorSampleRate: 1.0,
  integrations: [Sentry.replayIntegration({ maskAllText: true })],
});
""", d=dsn)


def n_otel_env_refs(i):
    v = i % 3
    if v == 0:
        return "yaml", "otel/collector-config.yaml", T("""
receivers:
  otlp:
    protocols:
      grpc: {}

extensions:
  bearertokenauth/vendor:
    filename: /var/run/secrets/otel/token

processors:
  batch: {}
  attributes/scrub:
    actions:
      - key: http.request.header.authorization
        action: delete
      - key: db.statement
        action: hash

exporters:
  otlp/honeycomb:
    endpoint: api.honeycomb.io:443
    headers:
      x-honeycomb-team: ${env:HONEYCOMB_API_KEY}
  otlphttp/vendor:
    endpoint: https://otlp.vendor.example.com
    auth:
      authenticator: bearertokenauth/vendor

service:
  extensions: [bearertokenauth/vendor]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [attributes/scrub, batch]
      exporters: [otlp/honeycomb, otlphttp/vendor]
""")
    if v == 1:
        return "json", "test/fixtures/otlp_trace.json", T("""
{
  "resourceSpans": [{
    "resource": { "attributes": [{ "key": "service.name", "value": { "stringValue": "%%s%%-api" } }] },
    "scopeSpans": [{
      "spans": [{
        "traceId": "%%t%%",
        "spanId": "%%sp%%",
        "parentSpanId": "%%psp%%",
        "name": "POST /oauth/token",
        "kind": 2,
        "startTimeUnixNano": "%%st%%",
        "endTimeUnixNano": "%%et%%",
        "attributes": [
          { "key": "http.route", "value": { "stringValue": "/oauth/token" } },
          { "key": "enduser.id", "value": { "stringValue": "%%u%%" } }
        ]
      }]
    }]
  }]
}
""", s=svc(), t=hexs(32), sp=hexs(16), psp=hexs(16), st=R.randint(1700000000000000000, 1720000000000000000), et=R.randint(1720000000000000001, 1730000000000000000), u=uuid())
    return "yaml", "k8s/otel/collector.yaml", T("""
apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: gateway
  namespace: observability
spec:
  mode: deployment
  image: otel/opentelemetry-collector-contrib@sha256:%%d%%
  env:
    - name: DD_API_KEY
      valueFrom:
        secretKeyRef:
          name: datadog-credentials
          key: api-key
  config:
    exporters:
      datadog:
        api:
          site: datadoghq.eu
          key: ${env:DD_API_KEY}
    service:
      pipelines:
        traces:
          receivers: [otlp]
          exporters: [datadog]
""", d=hexs(64))


def n_prometheus_digests(i):
    v = i % 3
    if v == 0:
        return "yaml", "monitoring/kustomization.yaml", T("""
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: monitoring
resources:
  - prometheus.yaml
  - alertmanager.yaml
images:
  - name: quay.io/prometheus/prometheus
    newTag: v2.53.1
    digest: sha256:%%d1%%
  - name: quay.io/prometheus/alertmanager
    digest: sha256:%%d2%%
  - name: grafana/grafana
    digest: sha256:%%d3%%
commonAnnotations:
  config.%%o%%.io/hash: "%%h%%"
""", d1=hexs(64), d2=hexs(64), d3=hexs(64), o=org(), h=hexs(40))
    if v == 1:
        return "yml", "prometheus/prometheus.yml", T("""
global:
  scrape_interval: 30s
scrape_configs:
  - job_name: kubernetes-apiserver
    scheme: https
    kubernetes_sd_configs:
      - role: endpoints
    tls_config:
      ca_file: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt
    bearer_token_file: /var/run/secrets/kubernetes.io/serviceaccount/token
  - job_name: kafka-connect
    authorization:
      type: Bearer
      credentials_file: /etc/prometheus/secrets/connect-token
    static_configs:
      - targets: ['connect.internal:8443']
remote_write:
  - url: https://aps-workspaces.%%r%%.amazonaws.com/workspaces/ws-%%ws%%/api/v1/remote_write
    sigv4:
      region: %%r%%
""", r=region(), ws=uuid())
    return "yaml", "monitoring/rules/secrets.rules.yaml", T("""
groups:
  - name: secret-hygiene
    rules:
      - alert: SecretRotationOverdue
        expr: max by (secret_name) (time() - secret_last_rotated_timestamp_seconds) > 90 * 86400
        for: 1h
        labels:
          severity: warning
          runbook_id: "%%rb%%"
        annotations:
          summary: "Secret {{ $labels.secret_name }} not rotated in 90 days"
      - alert: TokenRefreshFailing
        expr: sum(rate(oauth_token_refresh_errors_total{token_url=~".+"}[10m])) > 0
        for: 15m
        labels:
          severity: critical
""", rb=uuid())

def sops_enc(plain_len, typ="str"):
    return "ENC[AES256_GCM,data:%s,iv:%s,tag:%s,type:%s]" % (b64(plain_len), b64(32), b64(16), typ)


def n_sops_encrypted(i):
    v = i % 3
    lm = "2024-%02d-%02dT%02d:%02d:%02dZ" % (R.randint(1, 12), R.randint(1, 28), R.randint(0, 23), R.randint(0, 59), R.randint(0, 59))
    if v == 0:
        return "yaml", "secrets/prod/airflow.enc.yaml", T("""
airflow:
    fernet_key: %%e1%%
    connections:
        warehouse_password: %%e2%%
        salesforce_token: %%e3%%
sops:
    kms:
        - arn: %%kms%%
          created_at: "%%lm%%"
          enc: %%ek%%
          aws_profile: ""
    lastmodified: "%%lm%%"
    mac: ENC[AES256_GCM,data:%%mac%%,iv:%%iv%%,tag:%%tag%%,type:str]
    unencrypted_suffix: _unencrypted
    version: 3.8.1
""", e1=sops_enc(44), e2=sops_enc(20), e3=sops_enc(24), kms=kms_arn(), lm=lm, ek=b64(180), mac=b64(64), iv=b64(32), tag=b64(16))
    if v == 1:
        return "json", "deploy/secrets/grafana.enc.json", T("""
{
	"admin_password": "%%e1%%",
	"smtp_password": "%%e2%%",
	"sops": {
		"age": [
			{
				"recipient": "age1%%age%%",
				"enc": "-----BEGIN AGE ENCRYPTED FILE-----\\n%%ae%%\\n-----END AGE ENCRYPTED FILE-----\\n"
			}
		],
		"lastmodified": "%%lm%%",
		"mac": "ENC[AES256_GCM,data:%%mac%%,iv:%%iv%%,tag:%%tag%%,type:str]",
		"version": "3.9.0"
	}
}
""", e1=sops_enc(22), e2=sops_enc(18), age=rs("qpzry9x8gf2tvdw0s3jn54khce6mua7l", 58), ae=b64(180)[:200], lm=lm, mac=b64(64), iv=b64(32), tag=b64(16))
    return "env", "secrets/kafka-connect.enc.env", T("""
CONNECT_SASL_PASSWORD=%%e1%%
SNOWFLAKE_PRIVATE_KEY_PASSPHRASE=%%e2%%
SCHEMA_REGISTRY_SECRET=%%e3%%
sops_pgp__list_0__map_fp=%%fp%%
sops_pgp__list_0__map_created_at=%%lm%%
sops_lastmodified=%%lm%%
sops_mac=ENC[AES256_GCM,data:%%mac%%,iv:%%iv%%,tag:%%tag%%,type:str]
sops_unencrypted_suffix=_unencrypted
sops_version=3.8.1
""", e1=sops_enc(24), e2=sops_enc(16), e3=sops_enc(64), fp=hexs(40).upper(), lm=lm, mac=b64(64), iv=b64(32), tag=b64(16))


def n_sealed_external_secrets(i):
    v = i % 3
    if v == 0:
        return "yaml", "clusters/prod/airflow/sealed-metadata.yaml", T("""
apiVersion: bitnami.com/v1alpha1
kind: SealedSecret
metadata:
  name: airflow-metadata
  namespace: airflow
spec:
  encryptedData:
    connection: AgB%%a%%
    fernet-key: AgC%%b%%
  template:
    metadata:
      name: airflow-metadata
      namespace: airflow
    type: Opaque
""", a=b64(520), b=b64(460))
    if v == 1:
        return "yaml", "k8s/kafka/external-secret.yaml", T("""
apiVersion: external-secrets.io/v1beta1
kind: ExternalSecret
metadata:
  name: debezium-source-credentials
  namespace: kafka
spec:
  refreshInterval: 1h
  secretStoreRef:
    name: aws-secrets-manager
    kind: ClusterSecretStore
  target:
    name: debezium-source-credentials
  data:
    - secretKey: password
      remoteRef:
        key: kafka/debezium/orders
        property: password
    - secretKey: username
      remoteRef:
        key: kafka/debezium/orders
        property: username
""")
    return "yaml", "charts/pipelines/templates/secret.yaml", T("""
apiVersion: v1
kind: Secret
metadata:
  name: {{ include "pipelines.fullname" . }}-db
  labels:
    {{- include "pipelines.labels" . | nindent 4 }}
type: Opaque
data:
  password: {{ required "db.password is required" .Values.db.password | b64enc | quote }}
  api-token: {{ .Values.partner.apiToken | default (randAlphaNum 40) | b64enc | quote }}
""")


def n_ansible_vault(i):
    body = hexs(R.choice([640, 800, 960]))
    lines = "\n".join(body[k:k + 80] for k in range(0, len(body), 80))
    v = i % 2
    if v == 0:
        return "yml", "ansible/group_vars/%s/vault.yml" % pick(["db", "kafka", "monitoring"]), "$ANSIBLE_VAULT;1.1;AES256\n" + lines + "\n"
    return "yml", "ansible/host_vars/%s-db-01.yml" % svc(), T("""
postgresql_version: 16
postgresql_listen_addresses: "*"
postgresql_admin_user: postgres
postgresql_admin_password: !vault |
          $ANSIBLE_VAULT;1.1;AES256
%%l%%
postgresql_max_connections: 400
""", l="\n".join("          " + body[k:k + 80] for k in range(0, min(len(body), 400), 80)))


def n_redacted_dump(i):
    v = i % 3
    s = svc()
    if v == 0:
        return "md", "docs/runbooks/airflow-connections.md", T("""
# Rotating the warehouse connection

1. Check the current connection (the CLI masks the password):

```
$ airflow connections get warehouse -o yaml
warehouse:
  conn_type: postgres
  host: dw-%%s%%.internal.%%o%%.net
  login: etl_loader
  password: '***'
  port: 5432
  schema: analytics
  extra: '{"sslmode": "require"}'
```

2. Generate the new password in Vault (`vault write -f database/rotate-role/etl_loader`).
3. Restart the scheduler; the secrets backend picks the new value up within 5 minutes.
""", s=s, o=org())
    if v == 1:
        return "txt", "docs/plan-output-2024-07.txt", T("""
Terraform will perform the following actions:

  # aws_db_instance.%%s%% will be updated in-place
  ~ resource "aws_db_instance" "%%s%%" {
        id                  = "db-%%id%%"
      ~ instance_class      = "db.r6g.large" -> "db.r6g.xlarge"
      ~ password            = (sensitive value)
        tags                = {
            "Service" = "%%s%%"
        }
        # (48 unchanged attributes hidden)
    }

  # aws_ssm_parameter.api_token will be updated in-place
  ~ resource "aws_ssm_parameter" "api_token" {
        id             = "/%%s%%/prod/API_TOKEN"
      ~ value          = (sensitive value)
        # (9 unchanged attributes hidden)
    }

Plan: 0 to add, 2 to change, 0 to destroy.
""", s=s, id=rs(UP + DG, 26))
    return "log", "logs/sample/connect-worker.log", T("""
[2024-08-14 09:12:03,118] INFO ProducerConfig values:
	acks = -1
	bootstrap.servers = [kafka-0.kafka:9093, kafka-1.kafka:9093]
	client.id = connector-producer-debezium-orders-0
	sasl.jaas.config = [hidden]
	sasl.mechanism = SCRAM-SHA-512
	security.protocol = SASL_SSL
	ssl.key.password = null
	ssl.keystore.password = null
	ssl.truststore.password = [hidden]
 (org.apache.kafka.clients.producer.ProducerConfig:370)
[2024-08-14 09:12:03,402] INFO [debezium-orders|task-0] database.password = ******** (io.debezium.connector.common.BaseSourceTask:130)
[2024-08-14 09:12:04,017] INFO Kafka version: 3.7.1 (org.apache.kafka.common.utils.AppInfoParser:124)
[2024-08-14 09:12:04,017] INFO Kafka commitId: %%c%% (org.apache.kafka.common.utils.AppInfoParser:125)
""", c=hexs(16))


def n_key_format_docs(i):
    v = i % 3
    if v == 0:
        return "md", "docs/credentials.md", T("""
# Credentials used by the data platform

| Credential | Format | Where it lives |
|---|---|---|
| AWS access key (CI only) | `AKIA` + 16 upper-case chars, secret is 40 chars | Secrets Manager `ci/aws` |
| Databricks PAT | `dapi` followed by 32 hex characters | `pipelines` secret scope |
| Slack bot token | `xoxb-<workspace>-<bot>-<random>` | Vault `kv/slack/bot` |
| Datadog API key | 32 hex characters | Kubernetes secret `datadog-credentials` |
| Confluent Cloud API key | 16 chars key + 64 chars secret | Vault `kv/kafka/ccloud` |

Never paste a real value into a ticket or this repo. To check which key a
service is using, compare the last four characters only (e.g. `...%%l4%%`).
""", l4=rs(UP + DG, 4))
    if v == 1:
        return "md", "infra/README.md", T("""
# infra

Terraform for the analytics platform.

## Running locally

```bash
export AWS_PROFILE=%%o%%-data-admin
export TF_VAR_db_password="$(aws secretsmanager get-secret-value --secret-id %%s%%/db --query SecretString --output text)"
terraform init -backend-config=backend.hcl
terraform plan -var-file=envs/prod/terraform.tfvars
```

`terraform.tfvars` must not contain credentials. If you need a provider token,
put it in your shell (`export CLOUDFLARE_API_TOKEN=<your token>`) or use
`aws-vault exec`. Tokens look like `cf_xxxxxxxxxxxxxxxxxxxxxxxx`; report any
that show up in a diff.
""", o=org(), s=svc())
    return "md", "docs/adr/0012-secret-storage.md", T("""
# ADR 0012: Where pipeline secrets are stored

Status: accepted

## Context
Until March the Airflow connections were defined as `AIRFLOW_CONN_*` URIs in
the compose file, e.g. `postgresql://etl_loader:REDACTED@warehouse:5432/analytics`.
The password was rotated after the audit (ticket SEC-%%t%%).

## Decision
- Connections are read through the AWS Secrets Manager backend (`airflow/connections/<conn_id>`).
- dbt reads `DBT_ENV_SECRET_*` variables injected by the runner.
- Kafka clients use `${file:...}` config providers.

## Consequences
The `secret_name` for each connection follows `airflow/connections/{conn_id}` and
rotation is handled by the `rotate-db-credentials` Lambda (ARN in SSM `/platform/rotation/lambda-arn`).
""", t=R.randint(1000, 9999))


def n_public_keys_certs(i):
    v = i % 3
    if v == 0:
        return "tf", "cdn/signed_urls.tf", T("""
resource "aws_cloudfront_public_key" "downloads" {
  name        = "downloads-%%y%%"
  comment     = "Public half of the signed-URL key pair; private key is in Secrets Manager"
  encoded_key = <<-EOT
%%pk%%
EOT
}

resource "aws_cloudfront_key_group" "downloads" {
  name  = "downloads"
  items = [aws_cloudfront_public_key.downloads.id]
}
""", y=R.randint(2023, 2025), pk=pem_public())
    if v == 1:
        return "tf", "modules/bastion/keys.tf", T("""
resource "aws_key_pair" "ops" {
  key_name   = "ops-%%n%%"
  public_key = "%%k%%"
}

resource "aws_key_pair" "ci" {
  key_name   = "ci-deployer"
  public_key = "%%k2%%"
}
""", n=pick(WORDS), k=ssh_ed25519_pub("ops@%s" % org()), k2=ssh_ed25519_pub("ci@github-actions"))
    return "yaml", "k8s/kafka/ca-bundle.yaml", T("""
apiVersion: v1
kind: ConfigMap
metadata:
  name: kafka-ca-bundle
  namespace: kafka
data:
  ca.crt: |
%%c%%
""", c="\n".join("    " + l for l in pem_cert().split("\n")))


def n_oauth_client_ids(i):
    v = i % 3
    if v == 0:
        return "tf", "azure/app_registration.tf", T("""
data "azuread_client_config" "current" {}

locals {
  tenant_id          = "%%t%%"
  grafana_client_id  = "%%c%%"
  databricks_sp_id   = "%%d%%"
  key_vault_name     = "kv-%%o%%-data"
  client_secret_name = "grafana-oauth-client-secret"
}

resource "azurerm_role_assignment" "grafana_reader" {
  scope                = "/subscriptions/%%sub%%/resourceGroups/rg-observability"
  role_definition_name = "Monitoring Reader"
  principal_id         = "%%p%%"
}
""", t=uuid(), c=uuid(), d=uuid(), o=org(), sub=uuid(), p=uuid())
    if v == 1:
        return "yaml", "oauth2-proxy/values.yaml", T("""
config:
  clientID: "%%gid%%-%%g2%%.apps.googleusercontent.com"
  existingSecret: oauth2-proxy-credentials   # holds client-secret and cookie-secret
  configFile: |-
    provider = "google"
    email_domains = ["%%o%%.com"]
    upstreams = ["http://airflow-webserver.airflow:8080"]
    cookie_secure = true
    cookie_name = "_oauth2_proxy"
""", gid=rs(DG, 12), g2=rs(LO + DG, 32), o=org())
    return "ini", "superset/oauth.cfg", T("""
[oauth.okta]
base_url = https://%%o%%.okta.com/oauth2/v1/
client_id = 0oa%%cid%%
client_secret_env = SUPERSET_OKTA_CLIENT_SECRET
access_token_url = https://%%o%%.okta.com/oauth2/v1/token
authorize_url = https://%%o%%.okta.com/oauth2/v1/authorize
jwks_uri = https://%%o%%.okta.com/oauth2/v1/keys
api_key_header = X-Superset-Key
""", o=org(), cid=rs(AN, 17))


def n_build_and_event_ids(i):
    v = i % 3
    if v == 0:
        return "json", "events/s3_put.json", T("""
{
  "Records": [
    {
      "eventVersion": "2.1",
      "eventSource": "aws:s3",
      "awsRegion": "%%r%%",
      "eventTime": "2024-09-03T12:41:07.512Z",
      "eventName": "ObjectCreated:Put",
      "requestParameters": { "sourceIPAddress": "10.12.4.17" },
      "responseElements": {
        "x-amz-request-id": "%%rid%%",
        "x-amz-id-2": "%%id2%%"
      },
      "s3": {
        "configurationId": "landing-notify",
        "bucket": { "name": "%%o%%-landing", "arn": "arn:aws:s3:::%%o%%-landing" },
        "object": { "key": "partner/2024-09-03/batch-0007.parquet", "size": 1048576, "eTag": "%%etag%%", "sequencer": "%%seq%%" }
      }
    }
  ]
}
""", r=region(), rid=rs(UP + DG, 16), id2=b64(57), o=org(), etag=hexs(32), seq=rs(UP + DG, 18))
    if v == 1:
        return "json", ".vercel/project.json", T("""
{"projectId":"prj_%%p%%","orgId":"team_%%t%%","settings":{"framework":"nextjs","buildCommand":null,"outputDirectory":null}}
""", p=rs(AN, 28), t=rs(AN, 24))
    return "yml", ".github/workflows/dbt-ci.yml", T("""
name: dbt-ci
on: [pull_request]
permissions:
  id-token: write
  contents: read
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@%%c1%% # v4.1.7
      - uses: actions/setup-python@%%c2%% # v5.1.1
        with:
          python-version: '3.11'
      - uses: actions/cache@%%c3%% # v4.0.2
        with:
          path: ~/.cache/pip
          key: pip-${{ hashFiles('requirements.txt') }}-%%ck%%
      - uses: aws-actions/configure-aws-credentials@%%c4%% # v4.0.2
        with:
          role-to-assume: arn:aws:iam::%%a%%:role/dbt-ci
          aws-region: %%r%%
      - run: dbt build --target ci
        env:
          DBT_ENV_SECRET_PASSWORD: ${{ secrets.DBT_CI_PASSWORD }}
""", c1=gitsha(), c2=gitsha(), c3=gitsha(), c4=gitsha(), ck=hexs(8), a=acct(), r=region())

# ---------------------------------------------------------------- registry

SECRET = [
    ("tfvars-plaintext-db-password", s_tfvars_db_password, 4),
    ("terraform-provider-static-aws-keys", s_tf_provider_static_keys, 4),
    ("terraform-user-data-embedded-token", s_tf_user_data_heredoc, 3),
    ("terraform-secret-resource-literal", s_tf_secret_resource_literal, 3),
    ("pulumi-plaintext-secret", s_pulumi_plaintext, 3),
    ("cdk-unsafe-plaintext-secret", s_cdk_unsafe_plaintext, 4),
    ("cloudformation-literal-secret", s_cfn_noecho_default, 3),
    ("bicep-literal-secret", s_bicep_secret, 3),
    ("lambda-python-hardcoded-token", s_lambda_py_hardcoded, 3),
    ("lambda-node-go-java-embedded-secret", s_lambda_node_go_secret, 5),
    ("wrangler-vars-secret", s_wrangler_vars_secret, 3),
    ("netlify-vercel-env-secret", s_vercel_netlify_env_secret, 3),
    ("airflow-connection-with-password", s_airflow_conn_uri, 3),
    ("airflow-dag-embedded-credential", s_airflow_dag_embedded, 3),
    ("dbt-profiles-literal-credential", s_dbt_profiles_secret, 4),
    ("databricks-token-literal", s_databricks_token, 3),
    ("spark-hadoop-storage-keys", s_spark_storage_keys, 3),
    ("kafka-sasl-literal-credential", s_kafka_sasl_secret, 4),
    ("amqp-rabbitmq-credentials", s_amqp_url_credentials, 3),
    ("nats-nkey-seed", s_nats_creds_seed, 3),
    ("flyway-liquibase-password", s_migration_tool_password, 4),
    ("db-client-conf-password", s_db_client_conf_password, 4),
    ("db-seed-plaintext-credential", s_seed_plaintext_credential, 3),
    ("alertmanager-receiver-secret", s_alertmanager_receiver, 3),
    ("grafana-literal-secret", s_grafana_provisioning_secret, 4),
    ("apm-agent-api-key", s_apm_agent_key, 4),
    ("otel-collector-exporter-auth", s_otel_exporter_auth, 3),
    ("prometheus-scrape-remote-write-auth", s_prometheus_scrape_auth, 3),
    ("k8s-secret-base64-data", s_k8s_secret_base64, 3),
    ("gcp-service-account-key", s_gcp_sa_key, 3),
    ("private-key-in-pipeline-config", s_private_key_in_config, 3),
    ("pipeline-integration-test-credential", s_pipeline_integration_test, 3),
    ("platform-app-signing-key", s_app_signing_keys, 3),
]

NONE = [
    ("tfvars-secret-references", n_tfvars_secret_refs, 4),
    ("terraform-generated-secrets", n_tf_generated_secrets, 3),
    ("terraform-lockfile-hashes", n_tf_lockfile, 3),
    ("pulumi-encrypted-config", n_pulumi_encrypted_config, 3),
    ("cdk-secret-references", n_cdk_secret_refs, 3),
    ("cloudformation-dynamic-references", n_cfn_dynamic_refs, 3),
    ("bicep-keyvault-references", n_bicep_keyvault_refs, 3),
    ("lambda-runtime-secret-fetch", n_lambda_secret_fetch, 3),
    ("test-dummy-cloud-credentials", n_moto_dummy_creds, 3),
    ("wrangler-bindings-and-ids", n_wrangler_bindings, 3),
    ("frontend-public-client-keys", n_frontend_public_env, 4),
    ("firebase-maps-browser-key", n_firebase_web_config, 3),
    ("airflow-env-templated-connections", n_airflow_env_templates, 3),
    ("airflow-dag-secret-backends", n_airflow_dag_hooks, 3),
    ("dbt-profiles-env-var", n_dbt_env_vars, 3),
    ("dbt-lock-and-manifest-hashes", n_dbt_package_lock, 3),
    ("databricks-secret-scope-refs", n_databricks_secret_scope, 3),
    ("kafka-config-provider-refs", n_kafka_config_providers, 3),
    ("rabbitmq-definitions-password-hash", n_rabbitmq_definitions, 3),
    ("nats-bcrypt-and-public-nkeys", n_nats_bcrypt_nkeys, 3),
    ("migration-stored-password-hash", n_migration_password_hashes, 4),
    ("migration-checksums", n_liquibase_checksums, 3),
    ("db-client-conf-no-password", n_db_client_no_password, 3),
    ("alertmanager-secret-file-refs", n_alertmanager_file_refs, 3),
    ("grafana-env-file-interpolation", n_grafana_env_interpolation, 3),
    ("apm-config-secret-refs", n_apm_env_refs, 3),
    ("sentry-public-dsn", n_sentry_public_dsn, 3),
    ("otel-env-refs-and-trace-ids", n_otel_env_refs, 3),
    ("prometheus-digests-and-file-auth", n_prometheus_digests, 3),
    ("sops-encrypted-file", n_sops_encrypted, 4),
    ("sealed-or-external-secret", n_sealed_external_secrets, 3),
    ("ansible-vault-encrypted", n_ansible_vault, 3),
    ("redacted-secret-output", n_redacted_dump, 3),
    ("credential-format-docs", n_key_format_docs, 3),
    ("public-keys-and-certificates", n_public_keys_certs, 3),
    ("oauth-client-and-tenant-ids", n_oauth_client_ids, 3),
    ("event-build-and-pin-ids", n_build_and_event_ids, 3),
]


def main():
    cases = []
    for label, reg in (("secret", SECRET), ("none", NONE)):
        for cls, fn, n in reg:
            for i in range(n):
                ext, path, text = fn(i)
                if not text.endswith("\n"):
                    text += "\n"
                cases.append({"source": SOURCE, "class": cls, "label": label, "ext": ext, "path": path,
                              "origin": ORIGIN, "text": text})
    R.shuffle(cases)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "generator14.jsonl")
    with open(out, "w", encoding="utf-8") as f:
        for c in cases:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    print("wrote %d cases to %s" % (len(cases), out))


if __name__ == "__main__":
    main()
