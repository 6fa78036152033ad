"""Billing service: invoices and Stripe charges."""
