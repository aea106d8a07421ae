-- GraphEval: the negatives still to draw, $k per positive (slot j = 0 .. k-1).
CREATE OR REPLACE TEMP TABLE _ge_need AS SELECT p.head, p.relation, p.tail, s.j FROM _ge_pos p, range($k) s(j)
