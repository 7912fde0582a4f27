SELECT count(*) AS "c" FROM "ds_form_0001" AS t WHERE ('2023-01-01T00:00:00.000' <= t."d") LIMIT 1000
