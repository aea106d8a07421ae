-- GraphEval: the positives whose text no other positive has (the first in (relation, head, tail) order keeps it).
CREATE OR REPLACE TEMP TABLE _ge_pos AS SELECT * EXCLUDE (text_rank) FROM _ge_pos_all WHERE text_rank = 1
