"""Notifier service: shipment e-mails via SendGrid."""
