-- The self-model prediction test (agent/services/thinking/self_test.py; seed 003's measurable proxy).

-- name: self_test_run_insert
INSERT INTO self_test_runs (scenarios, agreed, agreement, model, detector, details)
VALUES (%(scenarios)s, %(agreed)s, %(agreement)s, %(model)s, %(detector)s, %(details)s::jsonb)
RETURNING run_id, created_at;

-- name: self_test_item_insert
INSERT INTO self_test_items (run_id, scenario, options, predicted, actual, agreed)
VALUES (%(run)s, %(scenario)s, %(options)s::jsonb, %(predicted)s, %(actual)s, %(agreed)s);
