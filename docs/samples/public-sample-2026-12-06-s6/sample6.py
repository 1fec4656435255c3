# Sample 6 (issue 43, ninth session): draw 40 findings from the eligible ones
# (not `uncalled`, not `incomplete`) of the five repositories' JSON findings.
import json, random, sys
root = sys.argv[1]
repos = sys.argv[2].split(',')
eligible = []
counts = {}
for D in repos:
    fs = json.load(open(f'{root}/findings_{D}.json'))
    counts[D] = [len(fs), sum(1 for f in fs if f.get('uncalled') is True), sum(1 for f in fs if f.get('incomplete') is True)]
    for f in fs:
        if f.get('uncalled') is True or f.get('incomplete') is True:
            continue
        g = dict(f); g['repo'] = D
        eligible.append(g)
key = lambda x: (x['repo'], x['file'], x['line'], x['column'], x['check'])
eligible.sort(key=key)
print('per repo [findings, uncalled, incomplete]:', counts)
print('eligible', len(eligible))
random.seed(20261209)
s = random.sample(eligible, 40) if len(eligible) > 40 else eligible
s.sort(key=key)
for i, x in enumerate(s, 1): x['n'] = i
json.dump(s, open(f'{root}/sample40.json', 'w'), indent=1)
for x in s:
    print(x['n'], x['repo'], x['file'].split('/' + x['repo'] + '/', 1)[-1], x['line'], x['check'], x['dependency'], 'FIX' if x['fixable'] else '')
