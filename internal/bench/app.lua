-- app.lua: the writes of a web application built on Laravel, as its query
-- builder sends them: one statement a transaction, naming only the
-- attributes set. Sign-ups (users: a unique email, a parent of posts and
-- comments), posts (a child of users, a parent of comments), comments
-- (some by guests, whose user_id is left out) and post edits. The tables
-- are appSchema's (internal/bench/app.go), in the sbtest database.

-- The bench gives every workload its table options; this one has its own
-- tables.
sysbench.cmdline.options = {
  tables = {"ignored", 1},
  table_size = {"ignored", 1},
}

local users, posts = 10000, 50000 -- seeded by appSchema

function thread_init()
  con = sysbench.sql.driver():connect()
  n = 0
end

function event()
  local r = sysbench.rand.uniform(1, 100)
  local now = os.date("!%Y-%m-%d %H:%M:%S")
  n = n + 1
  if r <= 10 then
    con:query(string.format("insert into `users` (`name`, `email`, `password`, `updated_at`, `created_at`) values " ..
      "('User %d', 'u%d-%d@example.org', '$2y$12$abcdefghijklmnopqrstuv.wxyz0123456789ABCDEFGHIJKLMN', '%s', '%s')",
      n, sysbench.tid, n, now, now))
  elseif r <= 40 then
    con:query(string.format("insert into `posts` (`user_id`, `title`, `body`, `updated_at`, `created_at`) values " ..
      "(%d, 'Post %d', '%s', '%s', '%s')", sysbench.rand.uniform(1, users), n, sysbench.rand.string(string.rep("@", 120)), now, now))
  elseif r <= 45 then
    con:query(string.format("insert into `comments` (`post_id`, `body`, `updated_at`, `created_at`) values (%d, '%s', '%s', '%s')",
      sysbench.rand.uniform(1, posts), sysbench.rand.string(string.rep("@", 80)), now, now))
  elseif r <= 80 then
    con:query(string.format("insert into `comments` (`post_id`, `user_id`, `body`, `updated_at`, `created_at`) values " ..
      "(%d, %d, '%s', '%s', '%s')", sysbench.rand.uniform(1, posts), sysbench.rand.uniform(1, users),
      sysbench.rand.string(string.rep("@", 80)), now, now))
  else
    con:query(string.format("update `posts` set `title` = 'Edited %d', `posts`.`updated_at` = '%s' where `id` = %d",
      n, now, sysbench.rand.uniform(1, posts)))
  end
end

function thread_done()
  con:disconnect()
end
