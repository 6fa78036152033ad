"""helpdesk-api: support ticket triage."""
