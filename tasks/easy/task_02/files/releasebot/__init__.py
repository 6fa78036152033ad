"""releasebot: release feed + webhook receiver for the platform team."""
