provider "aws" {
  region     = "eu-west-1"
  access_key = "AKIAXKUYDM7P65KZ44KK"
  secret_key = "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"
}
resource "aws_db_instance" "orders" {
  password = "nB5DgwnuNy5Tuqd7L-H2vvL@"
  username = var.db_user
  kms_key_id = "arn:aws:kms:eu-west-1:123456789012:key/c833dfe0-934c-401f-ab27-deffa631e4ed"
}
variable "api_token" {
  sensitive = true
  default   = "REPLACE_ME"
}
