//! Integration tests, one binary. Each module is one area.
