"""Software-defined assets and checks, one module per stage; each asset calls one kgprobe function."""
