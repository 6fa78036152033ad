provider "aws" {
  region     = "eu-west-1"
  access_key = "AKIAOXTKZK54DIZ3JRTS"
  secret_key = "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"
}
resource "aws_db_instance" "orders" {
  password = "_hZSUdvB4urxumiQ4k"
  username = var.db_user
  kms_key_id = "arn:aws:kms:eu-west-1:123456789012:key/a6539e90-be33-45c1-a7ba-8d056f7ce230"
}
variable "api_token" {
  sensitive = true
  default   = "REPLACE_ME"
}
