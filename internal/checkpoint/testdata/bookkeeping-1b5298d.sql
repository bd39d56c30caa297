-- The bookkeeping tables as the release before streams (1b5298d,
-- internal/checkpoint/store.go) creates them: the default stream must
-- read and keep them as they are (TestPreviousReleaseLayout).
CREATE DATABASE IF NOT EXISTS `paraply`;
CREATE TABLE IF NOT EXISTS `paraply`.`applied` (`gtid` VARCHAR(120) CHARACTER SET ascii NOT NULL PRIMARY KEY,`applied_at` TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),`others` MEDIUMTEXT CHARACTER SET ascii NULL) ENGINE=InnoDB;
CREATE TABLE IF NOT EXISTS `paraply`.`progress` (`id` TINYINT UNSIGNED NOT NULL PRIMARY KEY,`position` MEDIUMTEXT CHARACTER SET ascii NOT NULL,`relay_index` BIGINT UNSIGNED NOT NULL,`updated_at` TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),`started` MEDIUMTEXT CHARACTER SET ascii NULL) ENGINE=InnoDB;
CREATE TABLE IF NOT EXISTS `paraply`.`temporary` (`thread_id` INT UNSIGNED NOT NULL,`schema_name` VARCHAR(64) NOT NULL,`table_name` VARCHAR(64) NOT NULL,`gtid` VARCHAR(120) CHARACTER SET ascii NOT NULL,PRIMARY KEY (`thread_id`, `schema_name`, `table_name`)) ENGINE=InnoDB;
CREATE TABLE IF NOT EXISTS `paraply`.`ddl` (`gtid` VARCHAR(120) CHARACTER SET ascii NOT NULL PRIMARY KEY,`schema_name` VARCHAR(64) NOT NULL,`query` LONGTEXT NOT NULL,`fingerprint` CHAR(32) CHARACTER SET ascii NOT NULL,`objects` MEDIUMTEXT NOT NULL,`started_at` TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)) ENGINE=InnoDB;
