SELECT (CASE WHEN t."m" > 0 THEN ln(t."m") END) AS "x" FROM "ds_func_0001" AS t ORDER BY t."_rowid" ASC LIMIT 1
