CREATE TABLE IF NOT EXISTS erdb._snapshots (
    id VARCHAR,
    spec VARCHAR,
    source_kind VARCHAR,
    read BIGINT,
    loaded BIGINT,
    rejected BIGINT,
    loaded_at TIMESTAMP,
    report VARCHAR
)
