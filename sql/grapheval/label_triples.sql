-- GraphEval: the KG's triples as surface forms (normalised head label, relation, normalised tail label). A negative
-- whose surface form is one of these states a KG fact through another entity with the same name.
CREATE OR REPLACE TEMP TABLE _ge_label_triples AS
SELECT DISTINCT h.norm AS hn, x.relation, t.norm AS tn
FROM triples x JOIN _ge_ent h ON h.id = x.head JOIN _ge_ent t ON t.id = x.tail
