-- roles for the app
CREATE USER app_1 WITH PASSWORD 'iU%f!dZ8slfStu';
ALTER ROLE reporter PASSWORD 'hhjwEG#V!4wHNr';
CREATE USER 'svc'@'%' IDENTIFIED BY '!k%LCJdjs9tHxQcO%';
ALTER ROLE readonly PASSWORD 'changeme';
CREATE USER ci WITH PASSWORD :'ci_password';
INSERT INTO audit(id, sha) VALUES ('775fbfbd-769a-4b15-a71d-74ff5f3c802a', 'd85400897b54ca5e254c2abc2a8afdf36ead7768');
