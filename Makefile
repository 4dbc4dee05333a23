# Convenience wrappers; dev.sh does the work (it needs nothing but bash, python3 and gcc).
.PHONY: run test setup
run:
	bash dev.sh run
test:
	bash dev.sh test
setup:
	bash dev.sh setup
