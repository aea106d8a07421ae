-- GraphEval: the accepted candidates of this attempt become negatives.
INSERT INTO _ge_neg SELECT ph, pr, pt, j, attempt, part, head, relation, tail, text FROM _ge_cand WHERE reason IS NULL
