import json, random, sys
repos = ['qmc', 'rwkv', 'ipsedo', 'soumik', 'vis4d']
root = sys.argv[1] if len(sys.argv) > 1 else '/tmp/sample5/run1'
eligible = []
for D in repos:
    for f in json.load(open(f'{root}/findings_{D}.json')):
        if f.get('uncalled') is True or f.get('incomplete') is True:
            continue
        g = dict(f); g['repo'] = D
        eligible.append(g)
eligible.sort(key=lambda x: (x['repo'], x['file'], x['line'], x['column'], x['check']))
print('eligible', len(eligible))
random.seed(20261208)
s = random.sample(eligible, 40)
s.sort(key=lambda x: (x['repo'], x['file'], x['line'], x['column'], x['check']))
for i, x in enumerate(s, 1): x['n'] = i
json.dump(s, open(f'{root}/sample40.json', 'w'), indent=1)
for x in s:
    print(x['n'], x['repo'], x['file'].replace('/tmp/sample5/'+x['repo']+'/',''), x['line'], x['check'], x['dependency'], 'FIX' if x['fixable'] else '')
