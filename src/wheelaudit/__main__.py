from wheelaudit.cli.main import console

console()
