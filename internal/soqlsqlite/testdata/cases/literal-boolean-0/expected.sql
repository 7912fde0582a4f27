SELECT count(*) AS "c" FROM "ds_form_0001" AS t WHERE (t."b" = 0) LIMIT 1000
