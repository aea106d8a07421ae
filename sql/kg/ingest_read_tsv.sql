-- Parse one TSV triples file straight into staging; malformed rows land in the temporary table _csv_rej_err
-- with their line. -- Fields are kept verbatim.
INSERT INTO _st_triples
SELECT head, relation, tail, $src, NULL
FROM read_csv(
    $path,
    delim = $delim, quote = $quote, escape = $quote, header = $header, encoding = $encoding,
    columns = {'head': 'VARCHAR', 'relation': 'VARCHAR', 'tail': 'VARCHAR'},
    auto_detect = false, strict_mode = true, null_padding = false,
    store_rejects = true, rejects_table = '_csv_rej_err', rejects_scan = '_csv_rej_scan'
)
