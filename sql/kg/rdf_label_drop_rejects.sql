-- Label candidates rejected by rdf_label_rejects.sql get rank -1: neither a label nor a literal.
UPDATE _rdf_ranked AS r SET rank = -1
FROM _rdf_label_rejects x
WHERE r.rank IS NOT NULL AND r.s = x.s AND r.lit = x.lit AND r.lang IS NOT DISTINCT FROM x.lang
