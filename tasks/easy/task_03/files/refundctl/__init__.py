"""refundctl: Stripe refunds from the terminal."""
