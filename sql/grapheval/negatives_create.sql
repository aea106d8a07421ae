-- GraphEval: the verified negatives, filled attempt by attempt.
CREATE OR REPLACE TEMP TABLE _ge_neg (ph BIGINT, pr BIGINT, pt BIGINT, j BIGINT, attempt BIGINT, part VARCHAR,
    head BIGINT, relation BIGINT, tail BIGINT, text VARCHAR)
