-- Strict N-Triples: the terms of _nt_terms that do not match the patterns $iri and $langtag (subsets of what
-- RFC 3987 and BCP 47 allow); the caller validates these few with pyoxigraph.
SELECT kind, v FROM _nt_terms
WHERE NOT CASE kind WHEN 'iri' THEN regexp_full_match(v, $iri) ELSE regexp_full_match(v, $langtag) END
