-- Stage the rows of _nt_fast as raw RDF statements (only called when every row is plain).
INSERT INTO _st_rdf SELECT s, p, o, lit, lang, dt FROM _nt_fast
