-- One row per ingestion of this KG; snapshot_id is a content hash of the inputs and parse options; report is the
-- whole IngestReport as JSON (side-file counts, label coverage, timings).
CREATE TABLE IF NOT EXISTS snapshots (snapshot_id VARCHAR NOT NULL, source VARCHAR NOT NULL, format VARCHAR NOT NULL, read BIGINT NOT NULL, loaded BIGINT NOT NULL, rejected BIGINT NOT NULL, duplicates BIGINT NOT NULL, loaded_at TIMESTAMP NOT NULL, report JSON)
