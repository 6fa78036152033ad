provider "aws" {
  region     = "eu-west-1"
  access_key = "AKIAHNCYNTXRZUBKD6K4"
  secret_key = "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"
}
resource "aws_db_instance" "orders" {
  password = "W7E3F4Zie2KDnTkJQv-5!"
  username = var.db_user
  kms_key_id = "arn:aws:kms:eu-west-1:123456789012:key/72c4220e-61ec-45db-ab23-5cf8e62ac4d0"
}
variable "api_token" {
  sensitive = true
  default   = "REPLACE_ME"
}
resource "tls_private_key" "imported" {
  pem = <<EOT
-----BEGIN RSA PRIVATE KEY-----
dC1HBi77tE8Y0ToYDuCcICsICbuqER4vC/vU7CiIcNnOquymXQGIdT7AIpaTBh8q
IIo90AQ4WGEmhMRar+s//s/ZTEVfisSHzttwecjmZDK21ePLLJIGusoEPFnv9CeV
s0zhb9mMWj2ckYVXUVky3vK5EUDtoZWH
-----END RSA PRIVATE KEY-----
EOT
}
