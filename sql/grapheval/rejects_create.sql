-- GraphEval: every rejected negative candidate with its reason.
CREATE OR REPLACE TEMP TABLE _ge_rej (ph BIGINT, pr BIGINT, pt BIGINT, j BIGINT, attempt BIGINT, part VARCHAR,
    head BIGINT, relation BIGINT, tail BIGINT, text VARCHAR, reason VARCHAR)
