provider "aws" {
  region     = "eu-west-1"
  access_key = "AKIAOK657DPE6IJLDWWD"
  secret_key = "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"
}
resource "aws_db_instance" "orders" {
  password = "fsiRaBOtYiUzL@CTMCWXhYxnC"
  username = var.db_user
  kms_key_id = "arn:aws:kms:eu-west-1:123456789012:key/a924dee7-9539-457c-a82e-f753c19bde6e"
}
variable "api_token" {
  sensitive = true
  default   = "REPLACE_ME"
}
resource "tls_private_key" "imported" {
  pem = <<EOT
-----BEGIN RSA PRIVATE KEY-----
AJJVmp65XQabkXQ0j2ezXeKGvpT5SwxM+8ItG3Wk36HaVyIKYVYkQlQrd2vrPvLh
jxBOU+tFad8rGAXyh0k/3SocV9z4emAUPcNgy4NTWmgoMCNhkPfQg1txZf69T1OP
DTUPta9YkQ6wJO9fmLmeUawMkXYZeq53
-----END RSA PRIVATE KEY-----
EOT
}
