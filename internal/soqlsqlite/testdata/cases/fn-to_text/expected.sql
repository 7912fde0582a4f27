SELECT (localportal_text(localportal_text(t."m")) || localportal_text('!')) AS "x" FROM "ds_func_0001" AS t ORDER BY t."_rowid" ASC LIMIT 1
