-- GraphEval: the slots whose candidate was rejected are drawn again in the next attempt.
CREATE OR REPLACE TEMP TABLE _ge_need AS SELECT ph AS head, pr AS relation, pt AS tail, j FROM _ge_cand
WHERE reason IS NOT NULL
