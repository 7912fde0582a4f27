SELECT localportal_title('the CAT in the hat') AS "x" FROM "ds_func_0001" AS t LIMIT 1
