"""Helpers shared by every Harborline service."""
