SELECT count(*) AS "c" FROM "ds_form_0001" AS t WHERE ((t."b" = 1) OR (t."b" = 0)) LIMIT 1000
