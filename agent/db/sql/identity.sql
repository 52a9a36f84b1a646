-- Layer 0 proposals and Layer 1 goals as the operator's commands change them
-- (agent/services/records/identity.py); every change also goes to audit_log.

-- name: proposals_list
SELECT proposal_id, target_layer, kind, payload, evidence, status, created_at
FROM proposals WHERE %(all)s OR status = 'pending'
ORDER BY created_at;

-- name: proposal_lock
SELECT status, target_layer, payload FROM proposals WHERE proposal_id = %(id)s FOR UPDATE;

-- name: proposal_decide
UPDATE proposals SET status = %(status)s, decided_at = now(), decided_by = %(who)s
WHERE proposal_id = %(id)s;

-- name: goals_active_named
-- every active goal, or the one named
SELECT goal_id, name, weight FROM goals
WHERE status = 'active' AND (%(name)s::text IS NULL OR name = %(name)s);

-- name: goal_set_weight
UPDATE goals SET weight = %(weight)s, updated_at = now() WHERE goal_id = %(id)s;

-- name: goal_history
INSERT INTO goals_history (goal_id, old_weight, new_weight, reason)
VALUES (%(id)s, %(old)s, %(new)s, %(reason)s);

-- name: identity_layer0_approve
SELECT cogd_layer0_approve(%s, %s);

-- name: identity_traits
SELECT name, weight, description, is_boundary FROM identity
ORDER BY is_boundary DESC, weight DESC, name;

-- name: identity_active_goals
-- the goals a user's prompt carries: installation-wide ones (no user) and the user's own
-- (revision 0019: a goal promoted from one user's words is that user's); %(user_id)s
-- NULL: the installation-wide ones only
SELECT name, weight, description FROM goals
WHERE status = 'active' AND (user_id IS NULL OR user_id = %(user_id)s::uuid)
ORDER BY weight DESC, name;

-- name: identity_layer0_bootstrap
SELECT cogd_layer0_bootstrap(%s::text[]);
