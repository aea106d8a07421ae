-- Stage the plain rows of _nt_fast as raw RDF statements (after the other lines were parsed without error).
INSERT INTO _st_rdf SELECT s, p, o, lit, lang, dt FROM _nt_fast WHERE plain
