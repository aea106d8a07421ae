-- The neighbours each expanded node fans out to (node-level, shared by every query of a pass), with the node's
-- number of distinct neighbours so that fan-out capping can be reported.
CREATE OR REPLACE TEMP TABLE _khop_choice (node BIGINT, nbr BIGINT, degree BIGINT)
