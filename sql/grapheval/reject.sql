-- GraphEval: the rejected candidates of this attempt, kept with their reason.
INSERT INTO _ge_rej SELECT ph, pr, pt, j, attempt, part, head, relation, tail, text, reason FROM _ge_cand
WHERE reason IS NOT NULL
