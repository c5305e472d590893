# expect: workdir-relative@3
FROM ubuntu:22.04
WORKDIR workspace
