"""invoice-archiver: push rendered invoices to the S3 archive."""

__version__ = "1.4.2"
