-- roles for the app
CREATE USER app_2 WITH PASSWORD '71ZfPr4Mvy1ODA^H';
ALTER ROLE reporter PASSWORD 'DB23Bx1*P^PQaOXbNGz';
CREATE USER 'svc'@'%' IDENTIFIED BY 'uJ16jmy8NAT0';
ALTER ROLE readonly PASSWORD 'changeme';
CREATE USER ci WITH PASSWORD :'ci_password';
INSERT INTO audit(id, sha) VALUES ('928ebe6b-a93f-4ce2-a6e8-9a1dafd7208f', '5f1bdc3ee3936ad6ab2c0c71c3623820037f7eee');
