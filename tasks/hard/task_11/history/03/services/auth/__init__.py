"""Auth service: signed session tokens for the shipment portal."""
